// The size of the namespace's phrase graph, for neo4j.ppr_engine=auto: its phrases and its RELATION and
// SYNONYM edges (each stored once).
MATCH (p:Phrase {namespace: $namespace})
RETURN count(p) AS phrases, sum(COUNT { (p)-[:RELATION|SYNONYM]->(:Phrase) }) AS edges
