// gds_passage_scores_weighted for GDS < 2.17 (unweighted source lists, e.g. 2.13 on Neo4j 5.26 LTS):
// one PageRank run per seed summed with the seed weights (PPR is linear in its reset vector, see
// gds_ppr_linear), then the same normalisation and MENTIONS aggregation, in one statement.
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
