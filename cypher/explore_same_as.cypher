// Neo4j Browser: passages, the phrases they mention, the enterprise nodes those phrases are linked to
// (SAME_AS, made by `hipporag-neo4j link`), and those nodes' own relationships: the first 100 paths, 10
// relationships each. `truncated`: there were more paths (one more is read to tell) or relationships.
//   :param namespace => 'default'
MATCH path = (:Passage {namespace: $namespace})-[:MENTIONS]->(:Phrase)-[:SAME_AS]->(node)
WITH path, node
LIMIT 101
WITH collect({path: path, node: node}) AS found
UNWIND found[0..100] AS row
WITH found, row.path AS path, row.node AS node
WITH found, path,
     COLLECT { MATCH around = (node)-[rel]-(other) WHERE NOT other:Phrase RETURN around LIMIT 11 } AS around
RETURN path, around[0..10] AS neighbourhood,
       CASE WHEN size(found) > 100 THEN 'first 100 paths; there are more' ELSE toString(size(found)) + ' paths (all)' END
         AS shown,
       size(found) > 100 OR size(around) > 10 AS truncated
