// Every fact of the namespace that has an embedding, as parallel lists (vectors read separately, only for
// the ids not held yet: client_vectors_fact), with the graph version that gave each its embedding (0
// before it was recorded): the copy orders them by (written_in, id).
MATCH (f:Fact {namespace: $namespace})
WHERE f.embedding IS NOT NULL
RETURN collect(f.id) AS ids, collect(f.subject_id) AS subject_ids, collect(f.predicate) AS predicates,
       collect(f.object_id) AS object_ids, collect(coalesce(f.written_in, 0)) AS written_in
