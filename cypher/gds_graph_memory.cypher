// The namespace's projections in the GDS catalog with their heap use (for doctor). A projection lives
// in the heap of the server until dropped or the server restarts.
CALL gds.graph.list() YIELD graphName, nodeCount, relationshipCount, memoryUsage, sizeInBytes
WHERE graphName STARTS WITH $prefix
RETURN graphName AS graph_name, nodeCount AS node_count, relationshipCount AS relationship_count,
       memoryUsage AS memory_usage, sizeInBytes AS size_in_bytes
ORDER BY graph_name
