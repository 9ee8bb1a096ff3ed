// One batch of phrases; an existing phrase keeps its name and embedding.
UNWIND $rows AS row
MERGE (p:Phrase {namespace: $namespace, id: row.id})
  ON CREATE SET p.name = row.name, p.embedding = row.embedding, p.passage_count = 0
RETURN count(p) AS written
