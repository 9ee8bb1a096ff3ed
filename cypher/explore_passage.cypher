// Neo4j Browser: a passage, the phrases it mentions and the facts it states.
//   :param namespace => 'default'
//   :param passage_id => 'passage-...'
MATCH (d:Passage {namespace: $namespace, id: $passage_id})
OPTIONAL MATCH mentions = (d)-[:MENTIONS]->(:Phrase)
OPTIONAL MATCH states = (d)-[:STATES]->(:Fact)
RETURN d, collect(DISTINCT mentions) AS phrases, collect(DISTINCT states) AS facts
