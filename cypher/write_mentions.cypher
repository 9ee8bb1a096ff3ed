// One batch of (passage)-[:MENTIONS {count}]->(phrase) edges. Each edge it creates adds one to the
// phrase's passage_count (specificity = 1 / passage_count), which so stays the number of passages with
// a MENTIONS edge to it without being counted again (delete recounts: refresh_passage_counts).
UNWIND $rows AS row
MATCH (d:Passage {namespace: $namespace, id: row.passage_id})
  USING INDEX SEEK d:Passage(namespace, id)
MATCH (p:Phrase {namespace: $namespace, id: row.phrase_id})
  USING INDEX SEEK p:Phrase(namespace, id)
MERGE (d)-[m:MENTIONS]->(p)
  ON CREATE SET p.passage_count = coalesce(p.passage_count, 0) + 1
SET m.count = row.count
RETURN count(m) AS written
