// Neo4j Browser (joined graph): pairs of passages joined only through your graph, passage -> phrase ->
// your node -[one of $types]- your node <- phrase <- passage: the paths retrieval over the joined graph
// adds to the knowledge graph's own.
//   :param namespace => 'default'
//   :param types => ['SUBSIDIARY_OF']
MATCH path = (a:Passage {namespace: $namespace})-[:MENTIONS]->(:Phrase)-[:SAME_AS]->(x)-[rel]-(y)
             <-[:SAME_AS]-(:Phrase {namespace: $namespace})<-[:MENTIONS]-(b:Passage)
  WHERE type(rel) IN $types AND a <> b AND x <> y
RETURN path
LIMIT 50
