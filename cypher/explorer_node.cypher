// Graph explorer: a node of your own graph by elementId, if a phrase of the namespace is linked to it,
// with how many phrases are linked to it and how many nodes of yours it is related to (all of them).
MATCH (n)
WHERE elementId(n) = $node_id AND EXISTS { MATCH (:Phrase {namespace: $namespace})-[:SAME_AS]->(n) }
RETURN elementId(n) AS id, labels(n) AS labels, n.name AS name,
       size(COLLECT { MATCH (p:Phrase {namespace: $namespace})-[:SAME_AS]->(n) RETURN DISTINCT p.id }) AS links,
       size(COLLECT {
         MATCH (n)-[]-(o)
         WHERE NOT o:Phrase AND NOT o:Passage AND NOT o:Fact AND NOT o:HippoRAGMeta
         RETURN DISTINCT elementId(o)
       }) AS related
