// Graph explorer: the relationships of a node of your own graph with other nodes of yours (not the
// knowledge graph's), by type.
MATCH (n)-[r]-(o)
WHERE elementId(n) = $node_id AND NOT o:Phrase AND NOT o:Passage AND NOT o:Fact AND NOT o:HippoRAGMeta
RETURN elementId(startNode(r)) = $node_id AS outgoing, type(r) AS type, elementId(o) AS id, labels(o) AS labels,
       o.name AS name
ORDER BY type, id
LIMIT $limit
