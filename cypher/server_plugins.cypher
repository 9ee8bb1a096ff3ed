// Which plugin entry points are installed (GDS, APOC); asked before calling them.
SHOW FUNCTIONS YIELD name
WHERE name IN ['gds.version', 'apoc.version']
RETURN name
