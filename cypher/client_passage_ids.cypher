// Every passage id of the namespace (the Passage nodes of the in-process graph, mentions or not), with
// the graph version that wrote each (0 before it was recorded): the copy orders them by (written_in, id).
MATCH (d:Passage {namespace: $namespace})
RETURN collect(d.id) AS ids, collect(coalesce(d.written_in, 0)) AS written_in
