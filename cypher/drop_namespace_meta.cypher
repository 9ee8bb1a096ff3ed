// Delete the namespace's metadata node, last: until then the namespace is listed and a re-run of an
// interrupted drop finishes it.
MATCH (m:HippoRAGMeta {namespace: $namespace})
DETACH DELETE m
RETURN count(*) AS deleted
