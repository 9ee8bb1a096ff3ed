// Drop every GDS projection of the namespace (names start with $prefix: both kinds, every version,
// joined graphs too), when the namespace itself is dropped.
CALL gds.graph.list() YIELD graphName
WITH graphName AS name
WHERE name STARTS WITH $prefix
CALL gds.graph.drop(name, false) YIELD graphName
RETURN graphName AS dropped
