// One batch of passages; an existing passage is left as it is, but for the label of its embedding's
// dimension ($labels: [PassageEmbeddingNNN], which puts it in that dimension's vector index; another
// dimension's label removed; [] in a namespace whose nodes stay out of the vector indexes). `written_in`: the graph version that created it (see write_phrases).
UNWIND $rows AS row
MERGE (d:Passage {namespace: $namespace, id: row.id})
  ON CREATE SET d.title = row.title,
                d.text = row.text,
                d.metadata_json = row.metadata_json,
                d.caption = row.caption,
                d.embedding = row.embedding,
                d.written_in = $version
REMOVE d:$([l IN labels(d) WHERE l STARTS WITH $prefix_label AND NOT l IN $labels])
SET d:$($labels)
RETURN count(d) AS written
