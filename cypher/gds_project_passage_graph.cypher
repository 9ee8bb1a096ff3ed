// HippoRAG 2's graph: the phrase graph plus every Passage of the namespace, each joined to the phrases
// it mentions by a MENTIONS edge of weight 1; RELATION edges weighted by `weight`, SYNONYM edges by
// `score`; all undirected, self-loops left out. Every Phrase and Passage is a node of the projection
// (so every seed exists in it). Same contract as gds_project_phrase_graph (null when the namespace has
// no node at all).
MATCH (source:Phrase|Passage)
  WHERE source.namespace = $namespace
OPTIONAL MATCH (source)-[r:RELATION|SYNONYM|MENTIONS]->(target:Phrase {namespace: $namespace})
  WHERE target <> source
WITH source, target,
     CASE type(r)
       WHEN 'RELATION' THEN toFloat(r.weight)
       WHEN 'SYNONYM' THEN toFloat(r.score)
       ELSE 1.0
     END AS weight
WITH gds.graph.project(
       $graph_name, source, target,
       {relationshipProperties: {weight: coalesce(weight, 1.0)}},
       {undirectedRelationshipTypes: ['*']}
     ) AS g
RETURN g.graphName AS graph_name, g.nodeCount AS node_count, g.relationshipCount AS relationship_count
