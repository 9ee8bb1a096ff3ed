// Neo4j Browser: a phrase with its relations, synonyms and the passages that mention it: the 50 heaviest
// relation and synonym edges and the 25 passages that mention it most. `shown` says how many of each are
// drawn of how many there are and `truncated` whether any list was cut (Table view).
//   :param namespace => 'default'
//   :param name => 'barack obama'
MATCH (p:Phrase {namespace: $namespace, name: $name})
WITH p,
     COLLECT {
       MATCH related = (p)-[r:RELATION|SYNONYM]-(:Phrase)
       RETURN related ORDER BY coalesce(r.weight, r.score) DESC LIMIT 50
     } AS relations,
     COUNT { MATCH (p)-[:RELATION|SYNONYM]-(:Phrase) } AS relations_total,
     COLLECT {
       MATCH mentioned = (:Passage)-[m:MENTIONS]->(p)
       RETURN mentioned ORDER BY m.count DESC LIMIT 25
     } AS passages,
     COUNT { MATCH (:Passage)-[:MENTIONS]->(p) } AS passages_total
RETURN p, relations, passages,
       toString(size(passages)) + ' of ' + toString(passages_total) + ' passages (most mentions first), ' +
       toString(size(relations)) + ' of ' + toString(relations_total) +
       ' relation and synonym edges (heaviest first)' AS shown,
       size(passages) < passages_total OR size(relations) < relations_total AS truncated
