// Phrases marked "synonyms pending": their batch's synonym step has not run (yet, or lost to a crash).
MATCH (p:SynonymsPending {namespace: $namespace})
RETURN p.id AS id, p.name AS name, p.embedding AS embedding
ORDER BY id
LIMIT $limit
