// Graph explorer: phrases whose name contains $text (case-insensitive), mentioned most first.
MATCH (p:Phrase {namespace: $namespace})
WHERE toLower(p.name) CONTAINS toLower($text)
RETURN p.id AS id, p.name AS name, coalesce(p.passage_count, 0) AS passage_count
ORDER BY passage_count DESC, name
LIMIT $limit
