// Drop the vector indexes (before re-creating them with another dimension after a re-embed).
DROP INDEX hipporag_passage_embedding IF EXISTS;

DROP INDEX hipporag_phrase_embedding IF EXISTS;

DROP INDEX hipporag_fact_embedding IF EXISTS;
