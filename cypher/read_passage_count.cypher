// Number of passages in the namespace.
MATCH (d:Passage {namespace: $namespace})
RETURN count(d) AS passages
