// Vector indexes (cosine; the dimension is the embedder's). Shared by every namespace of the database,
// so every namespace must use the same dimension. Queries filter on namespace after the index look-up.
CREATE VECTOR INDEX hipporag_passage_embedding IF NOT EXISTS
FOR (n:Passage) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};

CREATE VECTOR INDEX hipporag_phrase_embedding IF NOT EXISTS
FOR (n:Phrase) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};

CREATE VECTOR INDEX hipporag_fact_embedding IF NOT EXISTS
FOR (n:Fact) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};
