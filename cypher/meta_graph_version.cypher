// Current graph version of the namespace (the GDS projection and the local PPR cache follow it).
MATCH (m:HippoRAGMeta {namespace: $namespace})
RETURN m.graph_version AS graph_version
