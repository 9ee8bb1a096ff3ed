// One batch of passages; an existing passage is left as it is.
UNWIND $rows AS row
MERGE (d:Passage {namespace: $namespace, id: row.id})
  ON CREATE SET d.title = row.title,
                d.text = row.text,
                d.metadata_json = row.metadata_json,
                d.embedding = row.embedding
RETURN count(d) AS written
