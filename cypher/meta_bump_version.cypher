// First statement of every write transaction: bumps the graph version and, by taking the write lock on
// the namespace's metadata node, serialises writers of one namespace (no deadlock between them).
// `vector_labels`: whether the transaction's nodes get their vector-index label (schema.py; a namespace
// made before the property existed has every node labelled).
MATCH (m:HippoRAGMeta {namespace: $namespace})
SET m.graph_version = m.graph_version + 1
RETURN m.graph_version AS graph_version,
       coalesce(m.vector_labels, 'labelled') AS vector_labels
