// Delete up to $limit relationships that start at nodes of the namespace (passages, phrases, facts):
// MENTIONS, STATES, RELATION, SYNONYM, and SAME_AS links to your nodes; your nodes stay. Run until it
// returns 0, before drop_namespace_nodes (drop_namespace does): a batch of nodes deleted with every
// relationship it has is bounded by its nodes, not by their degree, and 10,000 phrases of an M namespace
// with their synonym edges passed the server's 512 MiB of transaction memory.
CALL () {
  MATCH (:Passage {namespace: $namespace})-[r]->() RETURN r
  UNION ALL
  MATCH (:Phrase {namespace: $namespace})-[r]->() RETURN r
  UNION ALL
  MATCH (:Fact {namespace: $namespace})-[r]->() RETURN r
}
WITH r LIMIT $limit
DELETE r
RETURN count(*) AS deleted
