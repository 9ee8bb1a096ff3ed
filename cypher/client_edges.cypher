// The RELATION (weight) and SYNONYM (score) edges from the namespace's phrases $ids to its phrases, as
// parallel lists (`relation`: whether the edge is a RELATION); the in-process graph takes them as
// undirected and sums a pair's relation weights before its synonym score, as the embedded store does
// (canonical_adjacency). One batch of the copy's graph read: one collect of every edge of a namespace of
// 1.2M phrases (4.2M edges) passed the server's transaction memory limit (512 MiB).
UNWIND $ids AS id
MATCH (s:Phrase {namespace: $namespace, id: id})-[r:RELATION|SYNONYM]->(t:Phrase)
WHERE t.namespace = $namespace
RETURN collect(s.id) AS sources,
       collect(t.id) AS targets,
       collect(CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) ELSE toFloat(r.score) END) AS weights,
       collect(type(r) = 'RELATION') AS relation,
       sum(CASE type(r) WHEN 'RELATION' THEN 1 ELSE 0 END) AS relation_edges
