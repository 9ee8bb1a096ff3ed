// One batch of a namespace's switch to the vector indexes (schema.label_vectors): the next $limit
// passages by id after $after get the label of their dimension ($label: PassageEmbeddingNNN) when they have
// an embedding of that dimension ($dimension); `last` is where the next batch starts (null: done).
MATCH (n:Passage)
  USING INDEX n:Passage(namespace, id)
WHERE n.namespace = $namespace AND n.id > $after
WITH n ORDER BY n.id LIMIT $limit
SET n:$(CASE WHEN size(n.embedding) = $dimension THEN [$label] ELSE [] END)
RETURN count(n) AS seen, max(n.id) AS last
