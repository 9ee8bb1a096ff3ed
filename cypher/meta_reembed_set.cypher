// Record (or, with null, forget) the re-embed under way; while set, the store refuses to open.
MATCH (m:HippoRAGMeta {namespace: $namespace})
SET m.reembed_state = $reembed_state,
    m.graph_version = m.graph_version + 1
RETURN m.graph_version AS graph_version
