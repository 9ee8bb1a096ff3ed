"""Text embedders: ONNX Runtime (the default), sentence-transformers, or an OpenAI-compatible API.

* :mod:`.encoder`: the :class:`Embedder` protocol, the backends and :func:`create_embedder`;
* :mod:`.onnx_backend`: the model run by ONNX Runtime.
"""

from hipporag_neo4j.embedding.encoder import (
    PACKAGED_MODELS,
    AutoSentenceEmbedder,
    Embedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    create_embedder,
)

__all__ = [
    "PACKAGED_MODELS",
    "AutoSentenceEmbedder",
    "Embedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "create_embedder",
]
