// What the in-process copy of a namespace (neo4j.vector_search = client) is checked against on every
// query: the graph version (bumped by every write) and the embedding model (changed by reembed).
MATCH (m:HippoRAGMeta {namespace: $namespace})
RETURN m.graph_version AS graph_version, m.embedding_model AS embedding_model, m.embedding_dim AS embedding_dim
