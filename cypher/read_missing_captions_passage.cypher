// Up to $limit passages of the namespace written before passages had a `caption` (the name Neo4j
// Browser shows), with what it is made of; the store's open fills them in (stores/neo4j/captions.py,
// write_captions_passage) batch by batch until none is left.
MATCH (d:Passage {namespace: $namespace})
WHERE d.caption IS NULL
RETURN d.id AS id, d.title AS title
LIMIT $limit
