// Graph explorer: a node of your own graph by elementId, if a phrase of the namespace is linked to it.
MATCH (n)
WHERE elementId(n) = $node_id AND EXISTS { MATCH (:Phrase {namespace: $namespace})-[:SAME_AS]->(n) }
RETURN elementId(n) AS id, labels(n) AS labels, n.name AS name
