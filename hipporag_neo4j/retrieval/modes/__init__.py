"""The retrieval modes, a module each, registered by name in :data:`hipporag_neo4j.models.RETRIEVAL_MODES`.

Each module defines ``MODE``, an instance of :class:`hipporag_neo4j.retrieval.retriever.Mode` whose
``retrieve`` puts together the retriever's shared steps (entities, encoding, linking, the walk, dense
scores, the ranked result). Adding a mode is a new module here and one line in the registry.

* :mod:`.hipporag2`: HippoRAG 2, the default;
* :mod:`.hipporag`: the paper's single-step multi-hop retrieval;
* :mod:`.dense`: the passages' embeddings alone;
* :mod:`.ensemble` and :mod:`.hybrid`: the walk mixed with dense scores.

The multi-step strategies (:mod:`hipporag_neo4j.retrieval.ircot`, :mod:`hipporag_neo4j.retrieval.clues`)
wrap any of these modes.
"""
