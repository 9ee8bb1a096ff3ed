// Linking: MERGE (:Phrase)-[:SAME_AS {score, method}]->(node). The node is found by elementId and only
// read; re-running updates score and method. Returns how many links are new.
UNWIND $rows AS row
MATCH (p:Phrase {namespace: $namespace, id: row.phrase_id})
MATCH (n)
WHERE elementId(n) = row.node_id
OPTIONAL MATCH (p)-[old:SAME_AS]->(n)
WITH p, n, row, old IS NULL AS fresh
MERGE (p)-[r:SAME_AS]->(n)
SET r.score = row.score, r.method = row.method
RETURN sum(toInteger(fresh)) AS created
