// Graph explorer: the knowledge bases (namespaces) in the database.
MATCH (m:HippoRAGMeta)
RETURN m.namespace AS namespace
ORDER BY namespace
