// Mark phrases whose SYNONYM edges are still to be computed (run in the transaction that writes them;
// cleared by synonyms_pending_clear in the transaction that writes their edges).
UNWIND $ids AS id
MATCH (p:Phrase {namespace: $namespace, id: id})
SET p:SynonymsPending
RETURN count(p) AS marked
