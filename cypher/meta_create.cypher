// Record the metadata of a new namespace; an existing node is returned unchanged.
MERGE (m:HippoRAGMeta {namespace: $namespace})
  ON CREATE SET m.schema_version = $schema_version,
                m.embedding_model = $embedding_model,
                m.embedding_dim = $embedding_dim,
                m.graph_version = 0,
                m.vector_labels = $vector_labels,
                m.created_at = datetime()
RETURN m.schema_version AS schema_version,
       m.embedding_model AS embedding_model,
       m.embedding_dim AS embedding_dim,
       m.graph_version AS graph_version,
       coalesce(m.vector_labels, 'labelled') AS vector_labels
