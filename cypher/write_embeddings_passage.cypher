// Replace passage embeddings (re-embed).
UNWIND $rows AS row
MATCH (n:Passage {namespace: $namespace, id: row.id})
SET n.embedding = row.embedding
RETURN count(n) AS written
