// Every phrase of the namespace in one record of parallel lists (ids, names, passage counts), for the
// in-process copy, with the graph version that wrote each (0 before it was recorded): the copy orders
// them by (written_in, id). Vectors are read separately, only for the ids not held yet
// (client_vectors_phrase).
MATCH (p:Phrase {namespace: $namespace})
RETURN collect(p.id) AS ids,
       collect(p.name) AS names,
       collect(coalesce(p.passage_count, 0)) AS passage_counts,
       collect(coalesce(p.written_in, 0)) AS written_in
