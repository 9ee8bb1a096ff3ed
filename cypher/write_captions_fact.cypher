// Set the `caption` of facts written before facts had one (read_missing_captions_fact).
UNWIND $rows AS row
MATCH (f:Fact {namespace: $namespace, id: row.id})
  USING INDEX SEEK f:Fact(namespace, id)
SET f.caption = row.caption
RETURN count(f) AS written
