// Drop one projection if it exists (on close(), the projections this process made).
CALL gds.graph.drop($graph_name, false) YIELD graphName
RETURN graphName AS dropped
