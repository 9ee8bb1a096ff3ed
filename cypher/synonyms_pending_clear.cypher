// Clear the "synonyms pending" mark of phrases whose SYNONYM edges were written in this transaction
// (each found by the (namespace, id) index of the Phrase key, not by a scan of the marked phrases).
UNWIND $ids AS id
MATCH (p:Phrase {namespace: $namespace, id: id})
  USING INDEX SEEK p:Phrase(namespace, id)
WHERE p:SynonymsPending
REMOVE p:SynonymsPending
RETURN count(p) AS cleared
