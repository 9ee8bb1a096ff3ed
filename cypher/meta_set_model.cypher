// Record a new embedding model after a re-embed (and bump the graph version).
MATCH (m:HippoRAGMeta {namespace: $namespace})
SET m.embedding_model = $embedding_model,
    m.embedding_dim = $embedding_dim,
    m.graph_version = m.graph_version + 1
RETURN m.graph_version AS graph_version
