// Personalized PageRank from weighted seeds where GDS only takes unweighted source lists (GDS < 2.17,
// e.g. Neo4j 5.26 LTS with GDS 2.13). PPR is linear in its reset vector: the unnormalised scores of a
// run whose reset is sum_i w_i e_i equal sum_i w_i x (run from seed i alone). So one run per seed,
// weighted sum per node; the caller divides by the total. Exact, at one GDS run per seed. Each run
// starts from a bias of 1 (not a tiny weight), so GDS's absolute tolerance is not an issue here.
UNWIND $seeds AS seed
MATCH (source:Phrase {namespace: $namespace, id: seed.id})
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: [source],
  dampingFactor: $damping,
  maxIterations: $max_iterations,
  tolerance: $tolerance,
  concurrency: $concurrency,  // threads of this one call (neo4j.gds_concurrency)
  relationshipWeightProperty: 'weight',
  logProgress: false  // else GDS logs every iteration to neo4j.log at INFO: ~100 lines a query
})
YIELD nodeId, score
WITH nodeId, sum(seed.weight * score) AS score
WHERE score > 0  // the nodes the walks reached, before any node look-up
WITH gds.util.asNode(nodeId) AS node, score
WHERE node IS NOT NULL AND node:Phrase AND node.namespace = $namespace
RETURN node.id AS id, score
