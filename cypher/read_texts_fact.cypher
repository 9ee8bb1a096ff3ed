// One page of (id, text) of facts, in id order after $after (keyset pagination).
MATCH (n:Fact {namespace: $namespace})
WHERE n.id > $after
RETURN n.id AS id, n.text AS text
ORDER BY id
LIMIT $limit
