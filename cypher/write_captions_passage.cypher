// Set the `caption` of passages written before passages had one (read_missing_captions_passage).
UNWIND $rows AS row
MATCH (d:Passage {namespace: $namespace, id: row.id})
  USING INDEX SEEK d:Passage(namespace, id)
SET d.caption = row.caption
RETURN count(d) AS written
