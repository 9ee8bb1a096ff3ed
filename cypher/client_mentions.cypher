// Every MENTIONS edge of the namespace as parallel lists (passage id, phrase id, count).
MATCH (d:Passage {namespace: $namespace})-[m:MENTIONS]->(p:Phrase)
WHERE p.namespace = $namespace
RETURN collect(d.id) AS passage_ids, collect(p.id) AS phrase_ids, collect(m.count) AS counts
