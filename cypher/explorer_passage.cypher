// Graph explorer: one passage by id.
MATCH (d:Passage {namespace: $namespace, id: $passage_id})
RETURN d.id AS id, d.title AS title
