// Every passage of the namespace with its embedding, as parallel lists (a passage id can be written again
// with another text, so passage vectors are read again for every graph version).
MATCH (d:Passage {namespace: $namespace})
RETURN collect(d.id) AS ids, collect(d.embedding) AS vectors
