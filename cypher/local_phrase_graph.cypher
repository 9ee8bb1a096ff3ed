// The phrase graph for the in-process PPR engine in ONE statement: each phrase of the namespace with its
// outgoing RELATION (weighted by `weight`) and SYNONYM (by `score`) edges to phrases of the namespace.
// Neo4j reads at READ COMMITTED: the caller reads the graph version before and after this statement in
// the same transaction and keeps the graph for that version only when both agree.
MATCH (p:Phrase {namespace: $namespace})
RETURN p.id AS id,
       [(p)-[r:RELATION|SYNONYM]->(t:Phrase) WHERE t.namespace = $namespace AND t <> p |
         {target: t.id, weight: CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) ELSE toFloat(r.score) END}
       ] AS edges
ORDER BY id
