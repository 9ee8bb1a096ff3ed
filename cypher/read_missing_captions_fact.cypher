// Up to $limit facts of the namespace written before facts had a `caption` (the name Neo4j Browser
// shows), with what it is made of; the store's open fills them in (stores/neo4j/captions.py,
// write_captions_fact) batch by batch until none is left.
MATCH (f:Fact {namespace: $namespace})
WHERE f.caption IS NULL
RETURN f.id AS id, f.text AS text, f.predicate AS predicate
LIMIT $limit
