// One page of (id, title, text) of passages, in id order after $after (keyset pagination).
MATCH (n:Passage {namespace: $namespace})
WHERE n.id > $after
RETURN n.id AS id, n.title AS title, n.text AS text
ORDER BY id
LIMIT $limit
