"""Indexing: passages in, the knowledge graph out.

* :mod:`.inputs`: reading a user's files (text, Markdown, JSON, JSONL) into passages;
* :mod:`.passage_ids`: stable passage ids (content hashes, chunk ids);
* :mod:`.pipeline`: chunking, extraction, embedding and the store writes (:class:`Indexer`);
* :mod:`.synonyms`: synonym edges between phrases whose embeddings are close.
"""
