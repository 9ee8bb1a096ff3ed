// Graph explorer: the nodes of your own graph a phrase is linked to (SAME_AS), best link first.
MATCH (p:Phrase {namespace: $namespace, id: $phrase_id})-[s:SAME_AS]->(n)
RETURN elementId(n) AS id, labels(n) AS labels, n.name AS name, s.score AS score, s.method AS method
ORDER BY score DESC, id
LIMIT $limit
