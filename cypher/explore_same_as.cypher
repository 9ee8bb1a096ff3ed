// Neo4j Browser: passages, the phrases they mention, the enterprise nodes those phrases are linked to
// (SAME_AS, made by `hipporag-neo4j link`), and those nodes' own relationships.
//   :param namespace => 'default'
MATCH path = (:Passage {namespace: $namespace})-[:MENTIONS]->(:Phrase)-[:SAME_AS]->(node)
OPTIONAL MATCH around = (node)-[rel]-(other)
WHERE NOT other:Phrase
RETURN path, collect(around)[0..10] AS neighbourhood
LIMIT 100
