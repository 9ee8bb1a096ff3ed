// The embeddings of these phrases ($ids), as parallel lists. A node without one is left out here (collect()
// drops nulls, so the two lists would not line up); the copy counts it as missing.
UNWIND $ids AS id
MATCH (p:Phrase {namespace: $namespace, id: id})
  USING INDEX SEEK p:Phrase(namespace, id)
WHERE p.embedding IS NOT NULL
RETURN collect(p.id) AS ids, collect(p.embedding) AS vectors
