// The size of the namespace, for neo4j.ppr_engine=auto: its phrases and their RELATION and SYNONYM edges
// (each stored once), and its facts and passages (their vectors are in the in-process copy too).
MATCH (p:Phrase {namespace: $namespace})
WITH count(p) AS phrases, sum(COUNT { (p)-[:RELATION|SYNONYM]->(:Phrase) }) AS edges
RETURN
  phrases,
  edges,
  COUNT { MATCH (f:Fact) WHERE f.namespace = $namespace } AS facts,
  COUNT { MATCH (d:Passage) WHERE d.namespace = $namespace } AS passages
