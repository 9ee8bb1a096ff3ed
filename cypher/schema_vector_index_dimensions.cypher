// Our vector indexes: name, the label they cover and their dimension (the per-dimension ones and the
// single unsuffixed ones of older stores).
SHOW INDEXES YIELD name, type, labelsOrTypes, options
WHERE type = 'VECTOR' AND name STARTS WITH 'hipporag_'
RETURN name, labelsOrTypes[0] AS label, options.indexConfig['vector.dimensions'] AS dimensions
ORDER BY name
