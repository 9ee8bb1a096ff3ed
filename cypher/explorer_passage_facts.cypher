// Graph explorer: the facts a passage states, as (subject, predicate, object) phrase ids.
MATCH (d:Passage {namespace: $namespace, id: $passage_id})-[:STATES]->(f:Fact)
RETURN f.subject_id AS subject_id, f.predicate AS predicate, f.object_id AS object_id
ORDER BY subject_id, object_id, predicate
