// Label phrases with their embedding's dimension ($label: PhraseEmbeddingNNN), which puts them in
// that dimension's vector index; a label of another dimension (before a re-embed) is removed.
UNWIND $ids AS id
MATCH (n:Phrase {namespace: $namespace, id: id})
REMOVE n:$([l IN labels(n) WHERE l STARTS WITH $prefix_label AND l <> $label])
SET n:$($label)
RETURN count(n) AS labelled
