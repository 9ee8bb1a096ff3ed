// One batch of (passage)-[:STATES]->(fact) provenance edges.
UNWIND $rows AS row
MATCH (d:Passage {namespace: $namespace, id: row.passage_id})
MATCH (f:Fact {namespace: $namespace, id: row.fact_id})
MERGE (d)-[s:STATES]->(f)
RETURN count(s) AS written
