// Neo4j Browser: a node of your own graph, the phrases linked to it (SAME_AS) and its own relationships,
// 50 of each: `shown` says how many are drawn of how many there are, `truncated` whether a list was cut.
//   :param namespace => 'default'
//   :param node_id => '4:...:42'
MATCH (n)
WHERE elementId(n) = $node_id
WITH n,
     COLLECT { MATCH links = (:Phrase {namespace: $namespace})-[:SAME_AS]->(n) RETURN links LIMIT 50 } AS links,
     COUNT { MATCH (:Phrase {namespace: $namespace})-[:SAME_AS]->(n) } AS links_total,
     COLLECT { MATCH own = (n)-[]-(o) WHERE NOT o:Phrase RETURN own LIMIT 50 } AS relationships,
     COUNT { MATCH (n)-[]-(o) WHERE NOT o:Phrase } AS relationships_total
RETURN n, links, relationships,
       toString(size(links)) + ' of ' + toString(links_total) + ' linked phrases, ' +
       toString(size(relationships)) + ' of ' + toString(relationships_total) + ' relationships' AS shown,
       size(links) < links_total OR size(relationships) < relationships_total AS truncated
