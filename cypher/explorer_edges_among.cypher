// Graph explorer: the RELATION and SYNONYM edges among a set of phrases (the phrases of an explanation).
UNWIND $phrase_ids AS phrase_id
MATCH (a:Phrase {namespace: $namespace, id: phrase_id})-[r:RELATION|SYNONYM]->(b:Phrase {namespace: $namespace})
WHERE b.id IN $phrase_ids
RETURN a.id AS source, type(r) AS type, b.id AS target, r.predicates AS predicates,
       coalesce(r.weight, r.score) AS weight
ORDER BY source, target, type
