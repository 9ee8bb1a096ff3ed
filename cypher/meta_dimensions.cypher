// Embedding dimensions recorded by the namespaces of the database (each has its vector indexes).
MATCH (m:HippoRAGMeta)
RETURN DISTINCT m.embedding_dim AS embedding_dim
ORDER BY embedding_dim
