// Exact look-up of normalised phrase names.
UNWIND $names AS name
MATCH (p:Phrase {namespace: $namespace, name: name})
RETURN p.id AS id, p.name AS name, p.passage_count AS passage_count
