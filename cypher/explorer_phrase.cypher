// Graph explorer: one phrase by id.
MATCH (p:Phrase {namespace: $namespace, id: $phrase_id})
RETURN p.id AS id, p.name AS name, coalesce(p.passage_count, 0) AS passage_count
