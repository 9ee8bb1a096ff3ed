// The joined graph's extra edges for the in-process PPR engine (retrieval over the joined graph): the
// SAME_AS links of the namespace's phrases, then the relationships of a type in $types with at least
// one end linked. Read in the transaction of local_phrase_graph, between the same two graph-version
// reads (linking and unlinking bump the version; your own relationships are read as they are then).
//   :param types => ['SUBSIDIARY_OF']
CALL () {
  MATCH (p:Phrase {namespace: $namespace})-[r:SAME_AS]->(n)
  RETURN p.id AS phrase_id, elementId(n) AS source, null AS target, toFloat(r.score) AS score
  UNION ALL
  MATCH (:Phrase {namespace: $namespace})-[:SAME_AS]->(linked)
  WITH DISTINCT linked
  MATCH (linked)-[r]-(other)
    WHERE type(r) IN $types AND other <> linked AND NOT other:Phrase AND NOT other:Passage
  WITH DISTINCT r
  RETURN null AS phrase_id, elementId(startNode(r)) AS source, elementId(endNode(r)) AS target,
         1.0 AS score
}
RETURN phrase_id, source, target, score
ORDER BY phrase_id, source, target
