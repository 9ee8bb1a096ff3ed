// Personalized PageRank with weighted source nodes (GDS 2.17+ / Neo4j 2025.04+); phrase id -> score.
// GDS starts a source at (1 - damping) * bias and stops propagating from a node once its change is at
// most `tolerance`, an ABSOLUTE threshold on unnormalised scores: tiny biases (1 / passage count) would
// stop early and lose accuracy. So the biases of the seeds found are normalised to sum 1 here (the
// caller normalises too); the caller divides the scores by their sum. $seeds = [{id, weight}], weights
// > 0. Nodes deleted since the projection (gds.util.asNode gives null, or a reused id of another node)
// are left out.
UNWIND $seeds AS seed
MATCH (phrase:Phrase {namespace: $namespace, id: seed.id})
WITH collect([phrase, seed.weight]) AS found, sum(seed.weight) AS total
WHERE size(found) > 0 AND total > 0  // an empty list would run a plain, non-personalised PageRank
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: [pair IN found | [pair[0], pair[1] / total]],
  dampingFactor: $damping,
  maxIterations: $max_iterations,
  tolerance: $tolerance,
  concurrency: $concurrency,  // threads of this one call (neo4j.gds_concurrency)
  relationshipWeightProperty: 'weight',
  logProgress: false  // else GDS logs every iteration to neo4j.log at INFO: ~100 lines a query
})
YIELD nodeId, score
WITH nodeId, score WHERE score > 0  // the nodes the walk reached, before any node look-up
WITH gds.util.asNode(nodeId) AS node, score
WHERE node IS NOT NULL AND node:Phrase AND node.namespace = $namespace
RETURN node.id AS id, score
