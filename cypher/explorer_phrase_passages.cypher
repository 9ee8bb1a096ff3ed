// Graph explorer: the passages that mention a phrase, most mentions first.
MATCH (d:Passage)-[m:MENTIONS]->(p:Phrase {namespace: $namespace, id: $phrase_id})
RETURN d.id AS id, d.title AS title, m.count AS count
ORDER BY count DESC, id
LIMIT $limit
