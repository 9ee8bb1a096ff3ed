// One batch of facts; a fact already stored keeps its embedding unless one is given. `created`: how
// many this statement inserted (as write_phrases). In the same statement, the label of the embedding's
// dimension ($labels: [FactEmbeddingNNN], which puts the fact in that dimension's vector index; another
// dimension's label removed; [] in a namespace whose nodes stay out of the vector indexes).
// `written_in`: the graph version in which the fact got its embedding (its first write, as a rule), which
// places it in the in-process copy where a copy carried forward by that write appends it (after every
// older fact; client_facts), so the copy's fact matrix and its vector index only ever grow at the end.
UNWIND $rows AS row
OPTIONAL MATCH (old:Fact {namespace: $namespace, id: row.id})
  USING INDEX SEEK old:Fact(namespace, id)
WITH row, old IS NULL AS is_new
MERGE (f:Fact {namespace: $namespace, id: row.id})
  ON CREATE SET f.subject_id = row.subject_id,
                f.predicate = row.predicate,
                f.object_id = row.object_id,
                f.text = row.text,
                f.caption = row.caption
SET f.written_in = CASE WHEN f.embedding IS NULL AND row.embedding IS NOT NULL THEN $version ELSE f.written_in END
SET f.embedding = coalesce(row.embedding, f.embedding)
REMOVE f:$([l IN labels(f) WHERE l STARTS WITH $prefix_label AND NOT l IN $labels])
SET f:$($labels)
RETURN count(f) AS written, sum(CASE WHEN is_new THEN 1 ELSE 0 END) AS created
