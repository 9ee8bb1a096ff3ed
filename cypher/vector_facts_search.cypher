CYPHER 25
// Facts nearest to a query vector with the SEARCH clause (Neo4j 2026.04+). Same contract as
// vector_facts.
MATCH (node:FactEmbeddingDIM)
  SEARCH node IN (VECTOR INDEX hipporag_fact_embedding_DIM FOR $vector LIMIT $fetch) SCORE AS score
WITH collect({node: node, score: score}) AS hits
WITH size(hits) AS fetched, [h IN hits WHERE h.node.namespace = $namespace | h.node] AS facts
UNWIND CASE WHEN size(facts) = 0 THEN [null] ELSE facts END AS f
OPTIONAL MATCH (s:Phrase {namespace: $namespace, id: f.subject_id})
OPTIONAL MATCH (o:Phrase {namespace: $namespace, id: f.object_id})
RETURN fetched,
       collect(CASE WHEN f IS NULL THEN null ELSE {
         id: f.id, subject_id: f.subject_id, subject: s.name, predicate: f.predicate,
         object_id: f.object_id, object: o.name, score: vector.similarity.cosine(f.embedding, $vector)
       } END) AS matches
