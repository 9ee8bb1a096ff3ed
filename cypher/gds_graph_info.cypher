// Node and relationship counts of a projected graph; no row when it does not exist.
WITH $graph_name AS graph_name
WHERE gds.graph.exists(graph_name)
CALL gds.graph.list(graph_name) YIELD graphName, nodeCount, relationshipCount
RETURN graphName AS graph_name, nodeCount AS node_count, relationshipCount AS relationship_count
