// Every passage id of the namespace (the Passage nodes of the in-process graph, mentions or not).
MATCH (d:Passage {namespace: $namespace})
RETURN collect(d.id) AS ids
