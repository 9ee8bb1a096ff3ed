// Remove the phrases among these that no passage mentions any more, with their SYNONYM (and any
// remaining RELATION) edges; counts each removed synonym edge once.
UNWIND $ids AS id
MATCH (p:Phrase {namespace: $namespace, id: id})
WHERE NOT EXISTS { MATCH (d:Passage)-[:MENTIONS]->(p) WHERE d.namespace = $namespace }
OPTIONAL MATCH (p)-[s:SYNONYM]-(:Phrase)
WITH collect(DISTINCT p) AS phrases, collect(DISTINCT s) AS synonyms
FOREACH (edge IN synonyms | DELETE edge)
FOREACH (phrase IN phrases | DETACH DELETE phrase)
RETURN size(phrases) AS phrases_removed, size(synonyms) AS synonym_edges_removed
