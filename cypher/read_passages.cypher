// Passages by id.
UNWIND $ids AS id
MATCH (d:Passage {namespace: $namespace, id: id})
RETURN d.id AS id, d.title AS title, d.text AS text, d.metadata_json AS metadata_json
