// First statement of every write transaction: bumps the graph version and, by taking the write lock on
// the namespace's metadata node, serialises writers of one namespace (no deadlock between them).
MATCH (m:HippoRAGMeta {namespace: $namespace})
SET m.graph_version = m.graph_version + 1
RETURN m.graph_version AS graph_version
