// Replace fact embeddings (re-embed).
UNWIND $rows AS row
MATCH (n:Fact {namespace: $namespace, id: row.id})
SET n.embedding = row.embedding
RETURN count(n) AS written
