// Graph Data Science library version (only run when gds.version exists).
RETURN gds.version() AS version
