// The embeddings of these passages ($ids), as parallel lists (a passage id can be written again with
// another text, so passage vectors are read again for every graph version; in batches, as the phrases':
// one collect of every passage vector at L is 120,000 x 384 doubles, ~370 MB before any overhead, against
// the server's 512 MiB of transaction memory). A passage without one is left out here, as collect() would
// leave out its null vector but not its id.
UNWIND $ids AS id
MATCH (d:Passage {namespace: $namespace, id: id})
  USING INDEX SEEK d:Passage(namespace, id)
WHERE d.embedding IS NOT NULL
RETURN collect(d.id) AS ids, collect(d.embedding) AS vectors
