// Project the namespace's phrase graph into the GDS catalog under a versioned name: every Phrase (so
// every possible seed exists in the projection), RELATION edges weighted by `weight` and SYNONYM edges
// by `score`, all undirected; self-loops are left out (as in the in-process engine).
// Cypher projection as an aggregation function (GDS 2.4+). With no Phrase at all the aggregation sees
// no row and returns null (no graph is made): the caller treats that as an empty projection. The caller
// checks gds_graph_info first and, should this fail because a concurrent or retried run already made
// the graph, checks it again.
MATCH (source:Phrase {namespace: $namespace})
OPTIONAL MATCH (source)-[r:RELATION|SYNONYM]->(target:Phrase {namespace: $namespace})
  WHERE target <> source
WITH source, target,
     CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) ELSE toFloat(r.score) END AS weight
WITH gds.graph.project(
       $graph_name, source, target,
       {relationshipProperties: {weight: coalesce(weight, 1.0)}},
       {undirectedRelationshipTypes: ['*']}
     ) AS g
RETURN g.graphName AS graph_name, g.nodeCount AS node_count, g.relationshipCount AS relationship_count
