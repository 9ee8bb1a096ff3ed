// Personalized PageRank with weighted source nodes (GDS 2.17+ / Neo4j 2025.04+). Biases are not
// normalised by GDS: the caller divides the scores by their sum. $seeds = [{id, weight}], never empty,
// and every seed is a phrase of the projection.
UNWIND $seeds AS seed
MATCH (phrase:Phrase {namespace: $namespace, id: seed.id})
WITH collect([phrase, seed.weight]) AS sources
WHERE size(sources) > 0  // an empty list would run a plain, non-personalised PageRank
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: sources,
  dampingFactor: $damping,
  maxIterations: $max_iterations,
  tolerance: $tolerance,
  relationshipWeightProperty: 'weight'
})
YIELD nodeId, score
WITH nodeId, score
WHERE score > 0
RETURN gds.util.asNode(nodeId).id AS id, score
