// The MENTIONS edges of the namespace's passages $ids as parallel lists (passage id, phrase id, count).
// One batch of the copy's graph read (see client_edges).
UNWIND $ids AS id
MATCH (d:Passage {namespace: $namespace, id: id})-[m:MENTIONS]->(p:Phrase)
WHERE p.namespace = $namespace
RETURN collect(d.id) AS passage_ids, collect(p.id) AS phrase_ids, collect(m.count) AS counts
