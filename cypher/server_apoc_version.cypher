// APOC version (only run when apoc.version exists).
RETURN apoc.version() AS version
