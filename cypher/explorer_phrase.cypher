// Graph explorer: one phrase by id, with how many neighbours it has of each kind (all of them: the
// explorer draws the strongest and says how many more there are).
MATCH (p:Phrase {namespace: $namespace, id: $phrase_id})
RETURN p.id AS id, p.name AS name, coalesce(p.passage_count, 0) AS passage_count,
       size(COLLECT { MATCH (p)-[:RELATION]-(o:Phrase) RETURN DISTINCT o.id }) AS relations,
       COUNT { MATCH (p)-[:SYNONYM]-(:Phrase) } AS synonyms,
       size(COLLECT { MATCH (p)-[:SAME_AS]->(n) RETURN DISTINCT elementId(n) }) AS links,
       COUNT { MATCH (:Passage)-[:MENTIONS]->(p) } AS passages
