"""Adapters to other frameworks; each needs its optional extra (e.g. ``[graphrag]`` for neo4j_graphrag)."""
