// Linking: the phrases linked to these nodes, with their name and passage count (the seeds of a
// retrieval from enterprise nodes, weighted like the query's entities).
MATCH (p:Phrase {namespace: $namespace})-[r:SAME_AS]->(n)
WHERE elementId(n) IN $node_ids
RETURN p.id AS phrase_id, p.name AS phrase, coalesce(p.passage_count, 0) AS passage_count,
       elementId(n) AS node_id, r.score AS score, r.method AS method
ORDER BY score DESC, phrase_id
