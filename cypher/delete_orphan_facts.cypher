// Remove the facts among these that no passage states any more.
UNWIND $ids AS id
MATCH (f:Fact {namespace: $namespace, id: id})
WHERE NOT EXISTS { MATCH (d:Passage)-[:STATES]->(f) WHERE d.namespace = $namespace }
DETACH DELETE f
RETURN count(*) AS removed
