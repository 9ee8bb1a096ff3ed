// The embeddings of these phrases ($ids), as parallel lists.
UNWIND $ids AS id
MATCH (p:Phrase {namespace: $namespace, id: id})
  USING INDEX SEEK p:Phrase(namespace, id)
RETURN collect(p.id) AS ids, collect(p.embedding) AS vectors
