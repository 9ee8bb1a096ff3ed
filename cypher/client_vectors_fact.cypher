// The embeddings of these facts ($ids), as parallel lists. A node without one is left out here (collect()
// drops nulls, so the two lists would not line up); the copy counts it as missing.
UNWIND $ids AS id
MATCH (f:Fact {namespace: $namespace, id: id})
WHERE f.embedding IS NOT NULL
RETURN collect(f.id) AS ids, collect(f.embedding) AS vectors
