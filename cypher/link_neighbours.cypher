// Linking: the enterprise relationships of these types touching these nodes, either direction.
MATCH (n)-[r]-(m)
WHERE elementId(n) IN $node_ids AND type(r) IN $types AND NOT m:Phrase
RETURN DISTINCT elementId(startNode(r)) AS source, type(r) AS type, elementId(endNode(r)) AS target
