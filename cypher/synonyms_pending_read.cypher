// Phrases marked "synonyms pending": their batch's synonym step has not run (yet, or lost to a crash).
// Ids and names only: the vectors are those the writer holds, or read with client_vectors_phrase.
MATCH (p:SynonymsPending {namespace: $namespace})
RETURN p.id AS id, p.name AS name
ORDER BY id
LIMIT $limit
