CYPHER 25
// Passages nearest to a query vector with the SEARCH clause (Neo4j 2026.04+). Same contract as
// vector_passages.
MATCH (node:PassageEmbeddingDIM)
  SEARCH node IN (VECTOR INDEX hipporag_passage_embedding_DIM FOR $vector LIMIT $fetch) SCORE AS score
WITH collect({node: node, score: score}) AS hits
RETURN size(hits) AS fetched,
       [h IN hits WHERE h.node.namespace = $namespace
          | {id: h.node.id, score: vector.similarity.cosine(h.node.embedding, $vector)}] AS matches
