// Recompute the RELATION edge of each (subject, object) pair from the facts stated by passages:
// weight = number of (passage, fact) STATES pairs, predicates = their distinct predicates (sorted).
// A pair left with no supporting fact loses its edge. Used after writes and deletes, so it is exact.
// `created` / `removed`: edges this statement made or deleted (the in-process copy's edge count).
UNWIND $pairs AS pair
MATCH (s:Phrase {namespace: $namespace, id: pair.subject_id})
  USING INDEX SEEK s:Phrase(namespace, id)
MATCH (o:Phrase {namespace: $namespace, id: pair.object_id})
  USING INDEX SEEK o:Phrase(namespace, id)
OPTIONAL MATCH (d:Passage)-[:STATES]->(f:Fact {namespace: $namespace, subject_id: pair.subject_id, object_id: pair.object_id})
  WHERE d.namespace = $namespace
WITH s, o, d, f
ORDER BY f.predicate
WITH s, o, count(d) AS weight, collect(DISTINCT f.predicate) AS predicates
OPTIONAL MATCH (s)-[old:RELATION]->(o)
FOREACH (edge IN CASE WHEN weight = 0 AND old IS NOT NULL THEN [old] ELSE [] END | DELETE edge)
FOREACH (ignored IN CASE WHEN weight > 0 THEN [1] ELSE [] END |
  MERGE (s)-[r:RELATION]->(o)
  SET r.weight = weight, r.predicates = predicates)
RETURN count(*) AS pairs,
       sum(CASE WHEN weight > 0 AND old IS NULL THEN 1 ELSE 0 END) AS created,
       sum(CASE WHEN weight = 0 AND old IS NOT NULL THEN 1 ELSE 0 END) AS removed
