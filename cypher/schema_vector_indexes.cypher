// Vector indexes of one embedding dimension (cosine), one per kind: hipporag_<kind>_embedding_<dim>
// over the nodes labelled <Kind>Embedding<dim>. Namespaces of any dimension share a database: each
// dimension has its own indexes, and queries filter on namespace after the index look-up. DIM is
// spliced in by the store (a checked integer); $dimension is the same number.
CREATE VECTOR INDEX hipporag_passage_embedding_DIM IF NOT EXISTS
FOR (n:PassageEmbeddingDIM) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};

CREATE VECTOR INDEX hipporag_phrase_embedding_DIM IF NOT EXISTS
FOR (n:PhraseEmbeddingDIM) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};

CREATE VECTOR INDEX hipporag_fact_embedding_DIM IF NOT EXISTS
FOR (n:FactEmbeddingDIM) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};
