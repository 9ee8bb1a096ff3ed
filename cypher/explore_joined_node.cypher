// Neo4j Browser (joined graph): what the documents say about one of your nodes (by elementId) and what
// is connected to it: its phrases and their passages, and the same for its neighbours through the
// relationship types the joined walk follows (what `query --seed-node ID --via TYPE` walks through).
//   :param namespace => 'default'
//   :param node_id => '4:...:42'
//   :param types => ['SUBSIDIARY_OF']
MATCH (node)
  WHERE elementId(node) = $node_id
OPTIONAL MATCH own = (node)<-[:SAME_AS]-(:Phrase {namespace: $namespace})<-[:MENTIONS]-(:Passage)
OPTIONAL MATCH near = (node)-[rel]-(other)<-[:SAME_AS]-(:Phrase {namespace: $namespace})<-[:MENTIONS]-(:Passage)
  WHERE type(rel) IN $types
RETURN node, collect(DISTINCT own) AS passages, collect(DISTINCT near) AS connected
