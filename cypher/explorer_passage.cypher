// Graph explorer: one passage by id, with how many phrases it mentions (all of them).
MATCH (d:Passage {namespace: $namespace, id: $passage_id})
RETURN d.id AS id, d.title AS title, COUNT { MATCH (d)-[:MENTIONS]->(:Phrase) } AS phrases
