// Node and edge counts of the namespace.
RETURN
  COUNT { MATCH (d:Passage) WHERE d.namespace = $namespace } AS passages,
  COUNT { MATCH (p:Phrase) WHERE p.namespace = $namespace } AS phrases,
  COUNT { MATCH (f:Fact) WHERE f.namespace = $namespace } AS facts,
  COUNT { MATCH (s:Phrase)-[:RELATION]->(t:Phrase) WHERE s.namespace = $namespace AND t.namespace = $namespace }
    AS relation_edges,
  COUNT { MATCH (s:Phrase)-[:SYNONYM]->(t:Phrase) WHERE s.namespace = $namespace AND t.namespace = $namespace }
    AS synonym_edges,
  COUNT { MATCH (d:Passage)-[:MENTIONS]->(p:Phrase) WHERE d.namespace = $namespace AND p.namespace = $namespace }
    AS mentions
