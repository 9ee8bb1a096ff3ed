// Neo4j Browser: a node of your own graph, the phrases linked to it (SAME_AS) and its own relationships.
//   :param namespace => 'default'
//   :param node_id => '4:...:42'
MATCH (n)
WHERE elementId(n) = $node_id
OPTIONAL MATCH links = (:Phrase {namespace: $namespace})-[:SAME_AS]->(n)
OPTIONAL MATCH own = (n)-[]-(o)
WHERE NOT o:Phrase
RETURN n, collect(DISTINCT links)[0..50] AS links, collect(DISTINCT own)[0..50] AS relationships
