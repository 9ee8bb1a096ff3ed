// The processors GDS sees on the server (the JVM's available processors), for the threads of each
// PageRank call (neo4j.gds_concurrency is capped at it).
CALL gds.debug.sysInfo() YIELD key, value
WITH key, value WHERE key = 'availableCPUs'
RETURN toInteger(value) AS processors
