// Linking: the nodes of one label that have the property, one page at a time (values as text).
// The label is a parameter (dynamic label, Neo4j 5.26+) and also checked as a plain identifier.
//   :param label => 'Customer'
//   :param property => 'name'
MATCH (n:$($label))
WHERE n[$property] IS NOT NULL
RETURN elementId(n) AS id, toString(n[$property]) AS value
ORDER BY id
SKIP $skip LIMIT $limit
