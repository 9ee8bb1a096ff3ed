// Clear the "synonyms pending" mark of phrases whose SYNONYM edges were written in this transaction.
UNWIND $ids AS id
MATCH (p:SynonymsPending {namespace: $namespace, id: id})
REMOVE p:SynonymsPending
RETURN count(p) AS cleared
