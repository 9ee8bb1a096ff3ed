// Which of these fact ids are stored.
UNWIND $ids AS id
MATCH (n:Fact {namespace: $namespace, id: id})
RETURN n.id AS id
