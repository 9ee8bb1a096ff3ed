// One page of (id, name) of phrases, in id order after $after (keyset pagination).
MATCH (n:Phrase {namespace: $namespace})
WHERE n.id > $after
RETURN n.id AS id, n.name AS text
ORDER BY id
LIMIT $limit
