// One batch of RELATION edges brought forward by the STATES edges this transaction created: each row is
// one (subject, object) pair with `weight` = its new (passage, fact) statements and `predicates` = their
// distinct predicates; the edge's weight grows by it and its predicates become the sorted union. The
// same edge refresh_relations computes from every STATES edge, without reading them (the writer knows
// what it added; delete recomputes with refresh_relations). `created`: edges this statement made.
UNWIND $rows AS row
MATCH (s:Phrase {namespace: $namespace, id: row.subject_id})
  USING INDEX SEEK s:Phrase(namespace, id)
MATCH (o:Phrase {namespace: $namespace, id: row.object_id})
  USING INDEX SEEK o:Phrase(namespace, id)
OPTIONAL MATCH (s)-[old:RELATION]->(o)
WITH s, o, row, old IS NULL AS is_new
MERGE (s)-[r:RELATION]->(o)
SET r.weight = coalesce(r.weight, 0) + row.weight,
    r.predicates = COLLECT {
      UNWIND coalesce(r.predicates, []) + row.predicates AS predicate
      WITH DISTINCT predicate
      RETURN predicate ORDER BY predicate
    }
RETURN count(r) AS written, sum(CASE WHEN is_new THEN 1 ELSE 0 END) AS created
