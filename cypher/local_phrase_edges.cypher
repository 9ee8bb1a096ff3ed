// The phrase graph's edges for the in-process PPR engine: RELATION weighted by `weight`, SYNONYM by `score`.
MATCH (s:Phrase {namespace: $namespace})-[r:RELATION|SYNONYM]->(t:Phrase)
WHERE t.namespace = $namespace
RETURN s.id AS source,
       t.id AS target,
       CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) ELSE toFloat(r.score) END AS weight
