// Graph explorer: the MENTIONS edges from a set of passages to a set of phrases.
UNWIND $ids AS passage_id
MATCH (d:Passage {namespace: $namespace, id: passage_id})-[m:MENTIONS]->(p:Phrase)
WHERE p.id IN $phrase_ids
RETURN d.id AS passage_id, p.id AS phrase_id, m.count AS count
ORDER BY passage_id, phrase_id
