// Neo4j Browser: the most mentioned phrases (lowest specificity) and their degree in the phrase graph.
//   :param namespace => 'default'
MATCH (p:Phrase {namespace: $namespace})
RETURN p.name AS phrase, p.passage_count AS passages,
       COUNT { MATCH (p)-[:RELATION]-(:Phrase) } AS relations,
       COUNT { MATCH (p)-[:SYNONYM]-(:Phrase) } AS synonyms
ORDER BY passages DESC, phrase
LIMIT 25
