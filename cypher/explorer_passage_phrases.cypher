// Graph explorer: the phrases a passage mentions, most mentions first.
MATCH (d:Passage {namespace: $namespace, id: $passage_id})-[m:MENTIONS]->(p:Phrase)
RETURN p.id AS id, p.name AS name, coalesce(p.passage_count, 0) AS passage_count, m.count AS count
ORDER BY count DESC, name
LIMIT $limit
