// Graph explorer: passages whose title or id contains $text (case-insensitive), by id.
MATCH (d:Passage {namespace: $namespace})
WHERE toLower(coalesce(d.title, '')) CONTAINS toLower($text) OR toLower(d.id) CONTAINS toLower($text)
RETURN d.id AS id, d.title AS title
ORDER BY id
LIMIT $limit
