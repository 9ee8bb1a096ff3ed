"""Linking the knowledge graph to an existing (enterprise) graph: ``SAME_AS`` links from phrases to the
company's own nodes, and retrieval seeded from those nodes.

* :mod:`.graph_file`: an entity graph as JSONL (nodes and relationships), for the embedded store;
* :mod:`.embedded`: the enterprise graph and the links on the embedded store (``enterprise.sqlite``);
* :mod:`.linker`: ``link`` (normalised exact name, then embedding similarity) and ``unlink``;
* :mod:`.seeded`: retrieval from enterprise nodes, results listing the nodes linked to each passage.
"""
