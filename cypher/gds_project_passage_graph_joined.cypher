// HippoRAG 2's graph joined with your own graph (retrieval over the joined graph, `hipporag2` mode):
// gds_project_passage_graph plus every node a phrase of the namespace is linked to by SAME_AS (weight:
// the link's score) and every relationship of a type in $types with at least one end among those
// nodes (weight 1, with its other end); all undirected, self-loops left out. Your nodes are walked
// through, never ranked, and only read. Same contract as gds_project_passage_graph.
//   :param types => ['SUBSIDIARY_OF']
CALL () {
  MATCH (source:Phrase|Passage)
    WHERE source.namespace = $namespace
  OPTIONAL MATCH (source)-[r:RELATION|SYNONYM|MENTIONS]->(target:Phrase {namespace: $namespace})
    WHERE target <> source
  RETURN source, target,
         CASE type(r)
           WHEN 'RELATION' THEN toFloat(r.weight)
           WHEN 'SYNONYM' THEN toFloat(r.score)
           ELSE 1.0
         END AS weight
  UNION ALL
  MATCH (source:Phrase {namespace: $namespace})-[r:SAME_AS]->(target)
  RETURN source, target, toFloat(r.score) AS weight
  UNION ALL
  MATCH (:Phrase {namespace: $namespace})-[:SAME_AS]->(linked)
  WITH DISTINCT linked
  MATCH (linked)-[r]-(other)
    WHERE type(r) IN $types AND other <> linked AND NOT other:Phrase AND NOT other:Passage
  WITH DISTINCT r
  RETURN startNode(r) AS source, endNode(r) AS target, 1.0 AS weight
}
WITH gds.graph.project(
       $graph_name, source, target,
       {relationshipProperties: {weight: coalesce(weight, 1.0)}},
       {undirectedRelationshipTypes: ['*']}
     ) AS g
RETURN g.graphName AS graph_name, g.nodeCount AS node_count, g.relationshipCount AS relationship_count
