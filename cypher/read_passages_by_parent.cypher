// Candidate chunks of each parent passage: chunk ids are "<parent>#<n>"; the caller keeps those whose
// metadata names the parent.
UNWIND $ids AS parent
MATCH (d:Passage {namespace: $namespace})
WHERE d.id STARTS WITH parent + '#'
RETURN parent, d.id AS id, d.metadata_json AS metadata_json
ORDER BY parent, id
