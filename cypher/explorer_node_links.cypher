// Graph explorer: the phrases linked (SAME_AS) to a node of your own graph, best link first.
MATCH (p:Phrase {namespace: $namespace})-[s:SAME_AS]->(n)
WHERE elementId(n) = $node_id
RETURN p.id AS id, p.name AS name, coalesce(p.passage_count, 0) AS passage_count, s.score AS score,
       s.method AS method
ORDER BY score DESC, id
LIMIT $limit
