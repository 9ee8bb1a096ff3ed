// Passages nearest to a query vector (dense retrieval), over-fetched and filtered on namespace; each
// candidate re-scored exactly with vector.similarity.cosine (index scores are approximate: see
// vector_phrases).
CALL db.index.vector.queryNodes($index_name, $fetch, $vector) YIELD node, score
WITH collect({node: node, score: score}) AS hits
RETURN size(hits) AS fetched,
       [h IN hits WHERE h.node.namespace = $namespace
          | {id: h.node.id, score: vector.similarity.cosine(h.node.embedding, $vector)}] AS matches
