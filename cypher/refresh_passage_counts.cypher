// passage_count = number of passages with a MENTIONS edge to the phrase (specificity = 1 / passage_count).
UNWIND $ids AS id
MATCH (p:Phrase {namespace: $namespace, id: id})
SET p.passage_count = COUNT { MATCH (d:Passage)-[:MENTIONS]->(p) WHERE d.namespace = $namespace }
RETURN count(p) AS refreshed
