// Dimension of each of our vector indexes that exists.
SHOW INDEXES YIELD name, type, options
WHERE type = 'VECTOR' AND name IN $index_names
RETURN name, options.indexConfig['vector.dimensions'] AS dimensions
