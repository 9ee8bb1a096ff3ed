// Every RELATION (weight) and SYNONYM (score) edge between phrases of the namespace, as parallel lists
// (`relation`: whether the edge is a RELATION); the in-process graph takes them as undirected and sums a
// pair's relation weights before its synonym score, as the embedded store does (canonical_adjacency).
MATCH (s:Phrase {namespace: $namespace})-[r:RELATION|SYNONYM]->(t:Phrase)
WHERE t.namespace = $namespace
RETURN collect(s.id) AS sources,
       collect(t.id) AS targets,
       collect(CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) ELSE toFloat(r.score) END) AS weights,
       collect(type(r) = 'RELATION') AS relation,
       sum(CASE type(r) WHEN 'RELATION' THEN 1 ELSE 0 END) AS relation_edges
