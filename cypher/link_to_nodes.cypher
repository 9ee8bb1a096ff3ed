// Linking: the phrases linked to these nodes (the seeds of a retrieval from enterprise nodes).
MATCH (p:Phrase {namespace: $namespace})-[r:SAME_AS]->(n)
WHERE elementId(n) IN $node_ids
RETURN p.id AS phrase_id, elementId(n) AS node_id, r.score AS score, r.method AS method
ORDER BY score DESC, phrase_id
