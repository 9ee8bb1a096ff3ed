"""Text embedders: ONNX Runtime (the default), sentence-transformers, or an OpenAI-compatible API.

* :mod:`.encoder`: the :class:`Embedder` protocol, the backends and :func:`create_embedder`;
* :mod:`.onnx_backend`: the model run by ONNX Runtime (no torch), on the graph :mod:`.onnx_graph` builds;
* :mod:`.torch_backend`: sentence-transformers and the torch.onnx export (the ``[torch]`` extra);
* :mod:`.backend_choice`: with both installed, ``auto``'s one timing of the two on this machine, kept;
* :mod:`.local_model`: where a model is (packaged or a directory); :mod:`.batching`: length batches.
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
