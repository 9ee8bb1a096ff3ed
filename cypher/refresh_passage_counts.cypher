// passage_count = number of passages with a MENTIONS edge to the phrase (specificity = 1 / passage_count),
// counted again (after a delete; a write adds to it in write_mentions).
UNWIND $ids AS id
MATCH (p:Phrase {namespace: $namespace, id: id})
  USING INDEX SEEK p:Phrase(namespace, id)
SET p.passage_count = COUNT { MATCH (d:Passage)-[:MENTIONS]->(p) WHERE d.namespace = $namespace }
RETURN count(p) AS refreshed
