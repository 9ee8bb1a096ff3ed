// Every RELATION (weight) and SYNONYM (score) edge between phrases of the namespace, as parallel lists;
// the in-process graph takes them as undirected.
MATCH (s:Phrase {namespace: $namespace})-[r:RELATION|SYNONYM]->(t:Phrase)
WHERE t.namespace = $namespace
RETURN collect(s.id) AS sources,
       collect(t.id) AS targets,
       collect(CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) ELSE toFloat(r.score) END) AS weights,
       sum(CASE type(r) WHEN 'RELATION' THEN 1 ELSE 0 END) AS relation_edges
