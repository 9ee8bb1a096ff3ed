// HippoRAG 2's walk in one statement, so PPR scores never leave the server (GDS 2.17+): Personalized
// PageRank over the phrase graph plus Passage nodes (gds_project_passage_graph) from weighted phrase AND
// passage seeds in one run, $seeds = [{id, weight, kind: 'phrase' | 'passage'}]; the biases of the seeds
// found are normalised to sum 1 (GDS's tolerance is absolute, see gds_ppr_weighted) and the scores
// divided by their sum. Passages are ranked by their own PPR score: the best $limit (score > 0), ties
// by id, each with its $explain_phrases mentioned phrases of highest PPR as {phrase, score}. Only the
// scores of the phrases mentioned by those passages are looked at (`x IN list` is a hash look-up).
UNWIND $seeds AS seed
OPTIONAL MATCH (phrase:Phrase {namespace: $namespace, id: seed.id})
  WHERE seed.kind = 'phrase'
OPTIONAL MATCH (passage:Passage {namespace: $namespace, id: seed.id})
  WHERE seed.kind = 'passage'
WITH seed, coalesce(phrase, passage) AS source
WHERE source IS NOT NULL
WITH collect([source, seed.weight]) AS found, sum(seed.weight) AS total_weight
WHERE size(found) > 0 AND total_weight > 0  // an empty list would run a plain, non-personalised PageRank
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
WHERE node IS NOT NULL AND node.namespace = $namespace
WITH sum(score) AS total,
     collect(CASE WHEN node:Phrase THEN {node: node, score: score} END) AS phrases,
     collect(CASE WHEN node:Passage THEN {node: node, score: score} END) AS passages
UNWIND passages AS hit
WITH total, phrases, hit.node AS passage, hit.score AS raw
ORDER BY raw DESC, passage.id
LIMIT $limit
OPTIONAL MATCH (passage)-[:MENTIONS]->(p:Phrase)
  WHERE p.namespace = $namespace
WITH total, passage, raw, collect(p) AS mentioned, head(collect(phrases)) AS phrases
WITH total, collect({passage: passage, raw: raw, mentioned: mentioned}) AS top, head(collect(phrases)) AS phrases
WITH total, top, phrases, reduce(acc = [], t IN top | acc + t.mentioned) AS mentioned
WITH total, top, [h IN phrases WHERE h.node IN mentioned] AS explained
UNWIND top AS t
WITH total, t, [h IN explained WHERE h.node IN t.mentioned] AS mine
UNWIND CASE WHEN size(mine) = 0 THEN [null] ELSE mine END AS h
WITH total, t, h
ORDER BY h.score DESC, h.node.name
WITH total, t, collect(CASE WHEN h IS NULL THEN null ELSE {phrase: h.node.name, score: h.score / total} END) AS ranked
RETURN t.passage.id AS passage_id, t.raw / total AS score, ranked[0..$explain_phrases] AS top_phrases
ORDER BY score DESC, passage_id
