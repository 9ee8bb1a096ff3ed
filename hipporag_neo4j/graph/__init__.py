"""Pure graph math shared by the stores and retrieval: Personalized PageRank (:mod:`.ppr`) and the
adjacency of the knowledge graph joined with a user's graph (:mod:`.joined`). numpy and scipy only."""
