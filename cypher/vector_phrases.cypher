// Nearest phrases of each query vector through the vector index (Neo4j 5.x to 2026.03).
// The index ($index_name: hipporag_phrase_embedding_<dim>, the query dimension's) is shared by the
// namespaces of that dimension, so it is over-fetched ($fetch > top k) and filtered here;
// `fetched` and `lowest_score` (index scores) tell the caller whether a larger $fetch could find more;
// the caller sorts and cuts to top k.
// Index scores are (1 + cosine) / 2, and approximate: vector indexes quantize by default
// (`vector.quantization.enabled` = true, "can slightly decrease accuracy", Cypher manual, vector
// indexes). So each candidate of the namespace is re-scored exactly with vector.similarity.cosine (the
// same (1 + cosine) / 2 scale) and $min_score is applied to that exact score.
UNWIND $rows AS row
CALL db.index.vector.queryNodes($index_name, $fetch, row.vector) YIELD node, score
WITH row, collect({node: node, score: score}) AS hits
RETURN row.index AS row_index,
       size(hits) AS fetched,
       reduce(lowest = 1.0, h IN hits | CASE WHEN h.score < lowest THEN h.score ELSE lowest END) AS lowest_score,
       [m IN [h IN hits
                WHERE h.node.namespace = $namespace
                  AND (row.exclude_id IS NULL OR h.node.id <> row.exclude_id)
                | {id: h.node.id, name: h.node.name, passage_count: h.node.passage_count,
                   score: vector.similarity.cosine(h.node.embedding, row.vector)}]
          WHERE m.score >= $min_score] AS matches
