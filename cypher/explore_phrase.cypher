// Neo4j Browser: a phrase with its relations, synonyms and the passages that mention it.
//   :param namespace => 'default'
//   :param name => 'barack obama'
MATCH (p:Phrase {namespace: $namespace, name: $name})
OPTIONAL MATCH related = (p)-[:RELATION|SYNONYM]-(:Phrase)
OPTIONAL MATCH mentioned = (:Passage)-[:MENTIONS]->(p)
RETURN p, collect(DISTINCT related)[0..50] AS relations, collect(DISTINCT mentioned)[0..25] AS passages
