// One batch of (passage)-[:MENTIONS {count}]->(phrase) edges.
UNWIND $rows AS row
MATCH (d:Passage {namespace: $namespace, id: row.passage_id})
MATCH (p:Phrase {namespace: $namespace, id: row.phrase_id})
MERGE (d)-[m:MENTIONS]->(p)
SET m.count = row.count
RETURN count(m) AS written
