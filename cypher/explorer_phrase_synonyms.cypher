// Graph explorer: a phrase's SYNONYM neighbours, most similar first.
MATCH (p:Phrase {namespace: $namespace, id: $phrase_id})-[r:SYNONYM]-(o:Phrase)
RETURN startNode(r) = p AS outgoing, o.id AS id, o.name AS name, coalesce(o.passage_count, 0) AS passage_count,
       r.score AS score
ORDER BY score DESC, id
LIMIT $limit
