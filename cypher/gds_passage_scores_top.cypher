// gds_passage_scores_weighted with the aggregation cut to the walk's $top_nodes best nodes
// (neo4j.gds_top_nodes, opt-in; GDS 2.17+): the scores are still divided by the sum over EVERY node the
// walk reached (so a passage's score is the exact one minus the contributions of the phrases cut), but
// only the $top_nodes highest-scoring nodes are looked up and aggregated over MENTIONS. At M (124k
// phrases) the walk reaches ~19k phrases per question and their look-ups and aggregation take most of
// the statement's time (benchmarks/results/gds_reach_M_latest.md). Ties at the cut: any of them.
UNWIND $seeds AS seed
MATCH (phrase:Phrase {namespace: $namespace, id: seed.id})
WITH collect([phrase, seed.weight]) AS found, sum(seed.weight) AS total_weight
WHERE size(found) > 0 AND total_weight > 0
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: [pair IN found | [pair[0], pair[1] / total_weight]],
  dampingFactor: $damping,
  maxIterations: $max_iterations,
  tolerance: $tolerance,
  concurrency: $concurrency,  // threads of this one call (neo4j.gds_concurrency)
  relationshipWeightProperty: 'weight',
  logProgress: false  // else GDS logs every iteration to neo4j.log at INFO: ~100 lines a query
})
YIELD nodeId, score
WITH nodeId, score WHERE score > 0  // the nodes the walk reached, before any node look-up
ORDER BY score DESC
// the best $top_nodes, and the sum over all (a list of every node reached is never bound to a variable:
// rows carrying it made the transaction's memory estimate exceed 1 GiB at M)
WITH collect({nodeId: nodeId, score: score})[0..$top_nodes] AS best, sum(score) AS total
UNWIND best AS hit
WITH gds.util.asNode(hit.nodeId) AS node, hit.score AS score, total
WHERE node IS NOT NULL AND node:Phrase AND node.namespace = $namespace
WITH node AS p, score / total AS ppr
MATCH (p)<-[m:MENTIONS]-(d:Passage)
WHERE d.namespace = $namespace
WITH d, p, ppr * m.count AS contribution
ORDER BY contribution DESC, p.name
WITH d, sum(contribution) AS score, collect({phrase: p.name, contribution: contribution}) AS contributions
WHERE score > 0
RETURN d.id AS passage_id, score, contributions[0..$explain_phrases] AS top_phrases
ORDER BY score DESC, passage_id
LIMIT $limit
