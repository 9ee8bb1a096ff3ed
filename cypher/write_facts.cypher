// One batch of facts; a fact already stored keeps its embedding unless one is given.
UNWIND $rows AS row
MERGE (f:Fact {namespace: $namespace, id: row.id})
  ON CREATE SET f.subject_id = row.subject_id,
                f.predicate = row.predicate,
                f.object_id = row.object_id,
                f.text = row.text
SET f.embedding = coalesce(row.embedding, f.embedding)
RETURN count(f) AS written
