// HippoRAG's passage scores in one statement, so PPR scores never leave the server (GDS 2.17+):
// Personalized PageRank over the phrase graph from weighted seeds (biases normalised to sum 1, see
// gds_ppr_weighted), scores divided by their sum, then score(passage) = sum over its MENTIONS of
// ppr(phrase) * count. Returns the best $limit passages (score > 0), each with its $explain_phrases
// largest contributions as {phrase, contribution}. Same result as gds_ppr_weighted + passage_scores.
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
WITH gds.util.asNode(nodeId) AS node, score
WHERE node IS NOT NULL AND node:Phrase AND node.namespace = $namespace
WITH collect({node: node, score: score}) AS hits, sum(score) AS total
UNWIND hits AS hit
WITH hit.node AS p, hit.score / total AS ppr
MATCH (p)<-[m:MENTIONS]-(d:Passage)
WHERE d.namespace = $namespace
WITH d, p, ppr * m.count AS contribution
ORDER BY contribution DESC, p.name
WITH d, sum(contribution) AS score, collect({phrase: p.name, contribution: contribution}) AS contributions
WHERE score > 0
RETURN d.id AS passage_id, score, contributions[0..$explain_phrases] AS top_phrases
ORDER BY score DESC, passage_id
LIMIT $limit
