// Drop this namespace's projections of one kind whose graph version is LOWER than $version (names are
// $prefix followed by the version). A newer projection is never dropped: another process may be using
// it, and the process that read the older version will re-read the version and move on to it.
CALL gds.graph.list() YIELD graphName
WITH graphName AS stale
WHERE stale STARTS WITH $prefix AND toInteger(substring(stale, size($prefix))) < $version
CALL gds.graph.drop(stale, false) YIELD graphName
RETURN graphName AS dropped
