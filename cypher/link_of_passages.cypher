// Linking: the nodes linked to the phrases each of these passages mentions (a result's linked entities).
UNWIND $ids AS passage_id
MATCH (:Passage {namespace: $namespace, id: passage_id})-[:MENTIONS]->(p:Phrase)-[r:SAME_AS]->(n)
RETURN passage_id, p.name AS phrase, elementId(n) AS node_id, labels(n) AS labels, n.name AS name,
       r.score AS score, r.method AS method
ORDER BY passage_id, score DESC, node_id, phrase
