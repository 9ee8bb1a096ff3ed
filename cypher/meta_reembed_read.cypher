// The re-embed under way in the namespace (JSON: target model, dimension, last id per kind), or null.
MATCH (m:HippoRAGMeta {namespace: $namespace})
RETURN m.reembed_state AS reembed_state
