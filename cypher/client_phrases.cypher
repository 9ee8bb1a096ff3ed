// Every phrase of the namespace in one record of parallel lists (ids, names, passage counts), for the
// in-process copy; vectors are read separately, only for the ids not held yet (client_vectors_phrase).
MATCH (p:Phrase {namespace: $namespace})
RETURN collect(p.id) AS ids, collect(p.name) AS names, collect(coalesce(p.passage_count, 0)) AS passage_counts
