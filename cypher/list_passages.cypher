// A page of stored passages for `list`: identity and origin, not the text.
MATCH (d:Passage {namespace: $namespace})
WHERE d.id > $after
RETURN d.id AS id, d.title AS title, d.metadata_json AS metadata_json, size(d.text) AS chars
ORDER BY id
LIMIT $limit
