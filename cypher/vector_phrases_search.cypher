CYPHER 25
// Nearest phrases of each query vector with the SEARCH clause (Neo4j 2026.04+, where
// db.index.vector.queryNodes is deprecated). Same contract as vector_phrases (exact re-scoring too).
UNWIND $rows AS row
CALL (row) {
  MATCH (node:PhraseEmbeddingDIM)
    SEARCH node IN (VECTOR INDEX hipporag_phrase_embedding_DIM FOR row.vector LIMIT $fetch) SCORE AS score
  RETURN node, score
}
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
