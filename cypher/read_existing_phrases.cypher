// Which of these phrase ids are stored.
UNWIND $ids AS id
MATCH (n:Phrase {namespace: $namespace, id: id})
RETURN n.id AS id
