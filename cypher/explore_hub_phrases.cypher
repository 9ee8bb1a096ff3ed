// Neo4j Browser: the 25 most mentioned phrases (lowest specificity) and their degree in the phrase graph;
// `shown` says of how many phrases.
//   :param namespace => 'default'
WITH COUNT { MATCH (p:Phrase) WHERE p.namespace = $namespace } AS phrases
MATCH (p:Phrase {namespace: $namespace})
WITH p, phrases
ORDER BY p.passage_count DESC, p.name
LIMIT 25
RETURN p.name AS phrase, p.passage_count AS passages,
       COUNT { MATCH (p)-[:RELATION]-(:Phrase) } AS relations,
       COUNT { MATCH (p)-[:SYNONYM]-(:Phrase) } AS synonyms,
       'top 25 of ' + toString(phrases) + ' phrases' AS shown
