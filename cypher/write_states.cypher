// One batch of (passage)-[:STATES]->(fact) provenance edges.
UNWIND $rows AS row
MATCH (d:Passage {namespace: $namespace, id: row.passage_id})
  USING INDEX SEEK d:Passage(namespace, id)
MATCH (f:Fact {namespace: $namespace, id: row.fact_id})
  USING INDEX SEEK f:Fact(namespace, id)
MERGE (d)-[s:STATES]->(f)
RETURN count(s) AS written
