// Graph explorer: a phrase's RELATION neighbours (either direction), heaviest first.
MATCH (p:Phrase {namespace: $namespace, id: $phrase_id})-[r:RELATION]-(o:Phrase)
RETURN startNode(r) = p AS outgoing, o.id AS id, o.name AS name, coalesce(o.passage_count, 0) AS passage_count,
       r.predicates AS predicates, r.weight AS weight
ORDER BY weight DESC, id
LIMIT $limit
