// The namespace's metadata node, if any.
MATCH (m:HippoRAGMeta {namespace: $namespace})
RETURN m.schema_version AS schema_version,
       m.embedding_model AS embedding_model,
       m.embedding_dim AS embedding_dim,
       m.graph_version AS graph_version,
       coalesce(m.vector_labels, 'labelled') AS vector_labels,
       toString(m.created_at) AS created_at
