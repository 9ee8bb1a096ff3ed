// After a re-embed: drop every SYNONYM edge of the namespace and mark every phrase "synonyms pending",
// so the edges are recomputed from the new vectors.
MATCH (:Phrase {namespace: $namespace})-[e:SYNONYM]->(:Phrase {namespace: $namespace})
DELETE e;
MATCH (p:Phrase {namespace: $namespace})
SET p:SynonymsPending
