// gds_passage_nodes_weighted for GDS < 2.17 (unweighted source lists, e.g. 2.13 on Neo4j 5.26 LTS):
// one PageRank run per seed (phrase or passage), summed with the seed weights (PPR is linear in its
// reset vector, see gds_ppr_linear), then the same normalisation and ranking in one statement. Exact,
// at one GDS run per seed: keep the passage seeds few on this path.
UNWIND $seeds AS seed
OPTIONAL MATCH (phrase:Phrase {namespace: $namespace, id: seed.id})
  WHERE seed.kind = 'phrase'
OPTIONAL MATCH (passage:Passage {namespace: $namespace, id: seed.id})
  WHERE seed.kind = 'passage'
WITH seed, coalesce(phrase, passage) AS source
WHERE source IS NOT NULL
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
