// Block until an index is ONLINE (a new index is populated in the background).
CALL db.awaitIndex($index_name, $timeout_seconds)
