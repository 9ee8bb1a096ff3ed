// Which of these passage ids are stored. USING INDEX SEEK: an index seek per id on the key's (namespace, id)
// index; with a young database's statistics the planner may otherwise pick a scan of the namespace per id.
UNWIND $ids AS id
MATCH (n:Passage {namespace: $namespace, id: id})
  USING INDEX SEEK n:Passage(namespace, id)
RETURN n.id AS id
