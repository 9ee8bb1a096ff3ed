// Which of these passage ids are stored.
UNWIND $ids AS id
MATCH (n:Passage {namespace: $namespace, id: id})
RETURN n.id AS id
