// Neo4j Browser: what the graph explorer draws for an answer: the passages retrieved, the phrases of its
// explanation, the MENTIONS, RELATION and SYNONYM edges among them, and their SAME_AS links.
//   :param namespace => 'demo'
//   :param ids => ['passage-...']
//   :param names => ['helena várkonyi', 'stanford university']
MATCH (p:Phrase {namespace: $namespace})
WHERE p.name IN $names
WITH collect(p) AS phrases
OPTIONAL MATCH (d:Passage {namespace: $namespace})
WHERE d.id IN $ids
WITH phrases, collect(d) AS passages
UNWIND phrases AS p
OPTIONAL MATCH mentions = (d:Passage)-[:MENTIONS]->(p)
WHERE d IN passages
OPTIONAL MATCH edges = (p)-[:RELATION|SYNONYM]->(o:Phrase)
WHERE o IN phrases
OPTIONAL MATCH links = (p)-[:SAME_AS]->()
RETURN passages, collect(DISTINCT mentions) AS mentions, collect(DISTINCT edges) AS edges,
       collect(DISTINCT links) AS links
