// Neo4j Browser: metadata and size of a knowledge base.   :param namespace => 'default'
MATCH (m:HippoRAGMeta {namespace: $namespace})
RETURN m.namespace AS namespace, m.embedding_model AS embedding_model, m.embedding_dim AS embedding_dim,
       m.graph_version AS graph_version,
       COUNT { MATCH (d:Passage) WHERE d.namespace = $namespace } AS passages,
       COUNT { MATCH (p:Phrase) WHERE p.namespace = $namespace } AS phrases,
       COUNT { MATCH (f:Fact) WHERE f.namespace = $namespace } AS facts
