// Names of phrases by id (the explanations of the in-process engine).
UNWIND $ids AS id
MATCH (p:Phrase {namespace: $namespace, id: id})
RETURN p.id AS id, p.name AS name
