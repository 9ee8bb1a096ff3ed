// Neo4j Browser (joined graph): pairs of passages joined only through your graph, passage -> phrase ->
// your node -[one of $types]- your node <- phrase <- passage: the paths retrieval over the joined graph
// adds to the knowledge graph's own. The first 50 (`truncated`: there are more; one more is read to tell).
//   :param namespace => 'default'
//   :param types => ['SUBSIDIARY_OF']
MATCH path = (a:Passage {namespace: $namespace})-[:MENTIONS]->(:Phrase)-[:SAME_AS]->(x)-[rel]-(y)
             <-[:SAME_AS]-(:Phrase {namespace: $namespace})<-[:MENTIONS]-(b:Passage)
  WHERE type(rel) IN $types AND a <> b AND x <> y
WITH path
LIMIT 51
WITH collect(path) AS found
UNWIND found[0..50] AS path
RETURN path, size(found) > 50 AS truncated,
       CASE WHEN size(found) > 50 THEN 'first 50 paths; there are more' ELSE toString(size(found)) + ' paths (all)' END
         AS shown
