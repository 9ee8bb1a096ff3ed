// Embedding dimensions recorded by the other namespaces of the database (they share the vector indexes).
MATCH (m:HippoRAGMeta)
WHERE m.namespace <> $namespace
RETURN m.namespace AS namespace, m.embedding_dim AS embedding_dim
ORDER BY namespace
