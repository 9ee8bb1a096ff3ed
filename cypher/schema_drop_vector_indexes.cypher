// Drop the vector indexes of one dimension (DIM spliced in), once no namespace records it.
DROP INDEX hipporag_passage_embedding_DIM IF EXISTS;

DROP INDEX hipporag_phrase_embedding_DIM IF EXISTS;

DROP INDEX hipporag_fact_embedding_DIM IF EXISTS;
