// The Passage nodes of HippoRAG 2's walk for the in-process PPR engine: each passage of the namespace
// with the phrases it mentions (MENTIONS edges, weight 1). Read in the transaction of local_phrase_graph,
// between the same two graph-version reads.
MATCH (d:Passage {namespace: $namespace})
RETURN d.id AS id, [(d)-[:MENTIONS]->(p:Phrase) WHERE p.namespace = $namespace | p.id] AS phrases
ORDER BY id
