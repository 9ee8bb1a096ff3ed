// Facts nearest to a query vector (HippoRAG 2's fact retrieval) through the shared fact index,
// over-fetched and filtered on namespace like vector_passages; each candidate re-scored exactly with
// vector.similarity.cosine (index scores are approximate: see vector_phrases), with the names of its
// subject and object phrases. The caller sorts (score, then id) and cuts to top k.
CALL db.index.vector.queryNodes($index_name, $fetch, $vector) YIELD node, score
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
