// Every phrase id of the namespace (node order of the in-process PPR engine).
MATCH (p:Phrase {namespace: $namespace})
RETURN p.id AS id
ORDER BY id
