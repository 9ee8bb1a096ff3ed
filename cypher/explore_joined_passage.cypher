// Neo4j Browser (joined graph): one passage, the phrases it mentions, your nodes they are linked to
// (SAME_AS), and those nodes' relationships of the types the joined walk follows.
//   :param namespace => 'default'
//   :param passage_id => 'passage-...'
//   :param types => ['SUBSIDIARY_OF']
MATCH linked = (:Passage {namespace: $namespace, id: $passage_id})-[:MENTIONS]->(:Phrase)-[:SAME_AS]->(node)
OPTIONAL MATCH around = (node)-[rel]-(other)
  WHERE type(rel) IN $types AND NOT other:Phrase
RETURN linked, collect(around) AS relationships
