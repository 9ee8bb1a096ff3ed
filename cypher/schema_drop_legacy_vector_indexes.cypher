// Drop the single vector indexes of stores made before the per-dimension indexes (after migration).
DROP INDEX hipporag_passage_embedding IF EXISTS;

DROP INDEX hipporag_phrase_embedding IF EXISTS;

DROP INDEX hipporag_fact_embedding IF EXISTS;
