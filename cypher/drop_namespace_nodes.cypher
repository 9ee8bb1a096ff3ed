// Delete up to $limit nodes of the namespace (passages, phrases, facts) with every relationship they
// have, SAME_AS links to your own nodes included; your nodes stay. Run until it returns 0 (drop_namespace
// does), so no transaction holds a whole large namespace.
CALL () {
  MATCH (n:Passage {namespace: $namespace}) RETURN n
  UNION ALL
  MATCH (n:Phrase {namespace: $namespace}) RETURN n
  UNION ALL
  MATCH (n:Fact {namespace: $namespace}) RETURN n
}
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
