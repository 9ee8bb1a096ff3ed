// One batch of phrases; an existing phrase keeps its name and embedding. `created`: how many this
// statement inserted (the indexer reports these, not the phrases it found missing before the write: a
// concurrent run may have stored some since; writers of a namespace go one at a time, see ingest.py).
// In the same statement: the label of the embedding's dimension ($labels: [PhraseEmbeddingNNN], which
// puts the phrase in that dimension's vector index; another dimension's label removed; [] in a namespace
// whose nodes stay out of the vector indexes, see schema.py); and, on the phrases this statement creates
// only, the "synonyms pending" mark (cleared by synonyms_pending_clear in the transaction that writes their
// SYNONYM edges). A phrase another writer stored first (this writer found it missing before that commit)
// keeps what that writer left: marking it again after its synonym step had cleared it made that step read
// the same marks twice and stop ("kept ... phrases marked 'synonyms pending'"), as the embedded store,
// which marks only the phrases it inserts, never did.
// `written_in`: the graph version that created it, which places it in the in-process copy as a copy
// carried forward by that write places it (after every older phrase; client_phrases).
UNWIND $rows AS row
OPTIONAL MATCH (old:Phrase {namespace: $namespace, id: row.id})
  USING INDEX SEEK old:Phrase(namespace, id)
WITH row, old IS NULL AS is_new
MERGE (p:Phrase {namespace: $namespace, id: row.id})
  ON CREATE SET p.name = row.name, p.embedding = row.embedding, p.passage_count = 0, p.written_in = $version,
    p:SynonymsPending
REMOVE p:$([l IN labels(p) WHERE l STARTS WITH $prefix_label AND NOT l IN $labels])
SET p:$($labels)
RETURN count(p) AS written, sum(CASE WHEN is_new THEN 1 ELSE 0 END) AS created
