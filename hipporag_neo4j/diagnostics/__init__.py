"""``doctor``: what this installation and its store can do (models, store, Neo4j server and plugins)."""
