// The embeddings of these passages ($ids), as parallel lists (a passage id can be written again with
// another text, so passage vectors are read again for every graph version; in batches, as the phrases':
// one collect of 120,000 passage vectors came within 100 MiB of the server's 512 MiB transaction memory).
UNWIND $ids AS id
MATCH (d:Passage {namespace: $namespace, id: id})
  USING INDEX SEEK d:Passage(namespace, id)
RETURN collect(d.id) AS ids, collect(d.embedding) AS vectors
