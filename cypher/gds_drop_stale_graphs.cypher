// Drop this namespace's projections other than the current one (names share the prefix $prefix).
CALL gds.graph.list() YIELD graphName
WITH graphName AS stale
WHERE stale STARTS WITH $prefix AND stale <> $graph_name
CALL gds.graph.drop(stale, false) YIELD graphName
RETURN graphName AS dropped
