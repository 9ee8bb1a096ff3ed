// Linking: the nodes linked to these phrases (for "which of our entities is this passage about").
UNWIND $ids AS phrase_id
MATCH (p:Phrase {namespace: $namespace, id: phrase_id})-[r:SAME_AS]->(n)
RETURN p.id AS phrase_id, elementId(n) AS node_id, labels(n) AS labels, n.name AS name,
       r.score AS score, r.method AS method
ORDER BY score DESC, node_id
