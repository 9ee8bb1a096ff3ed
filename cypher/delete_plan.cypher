// What deleting these passages touches: the passages found, the phrases they mention and the facts
// they state (with the phrase pair of each fact, whose RELATION edge must be recomputed).
UNWIND $ids AS id
MATCH (d:Passage {namespace: $namespace, id: id})
RETURN d.id AS id,
       [(d)-[:MENTIONS]->(p:Phrase) | p.id] AS phrase_ids,
       [(d)-[:STATES]->(f:Fact) | {id: f.id, subject_id: f.subject_id, object_id: f.object_id}] AS facts
