// The embeddings of these facts ($ids), as parallel lists.
UNWIND $ids AS id
MATCH (f:Fact {namespace: $namespace, id: id})
RETURN collect(f.id) AS ids, collect(f.embedding) AS vectors
