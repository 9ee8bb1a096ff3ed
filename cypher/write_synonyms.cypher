// One batch of SYNONYM edges, stored once per pair (source.id < target.id); returns how many were new.
// An edge already stored keeps its score (as on the embedded store): the score is set on creation only.
// `created_pairs`: the [source, target] of the new ones (the in-process copy adds exactly these).
UNWIND $rows AS row
MATCH (s:Phrase {namespace: $namespace, id: row.source_id})
  USING INDEX SEEK s:Phrase(namespace, id)
MATCH (t:Phrase {namespace: $namespace, id: row.target_id})
  USING INDEX SEEK t:Phrase(namespace, id)
OPTIONAL MATCH (s)-[old:SYNONYM]->(t)
WITH s, t, row, old IS NULL AS is_new
MERGE (s)-[e:SYNONYM]->(t)
  ON CREATE SET e.score = row.score
RETURN sum(CASE WHEN is_new THEN 1 ELSE 0 END) AS created,
       collect(CASE WHEN is_new THEN [row.source_id, row.target_id] END) AS created_pairs
