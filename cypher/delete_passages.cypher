// Remove passages with their MENTIONS and STATES edges.
UNWIND $ids AS id
MATCH (d:Passage {namespace: $namespace, id: id})
DETACH DELETE d
RETURN count(*) AS removed
