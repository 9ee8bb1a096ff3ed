"""One base exception, specific subclasses. Only :class:`RetryableError` subclasses are ever retried."""

from __future__ import annotations


class HippoRAGError(Exception):
    """Base of every error raised by hipporag-neo4j."""


class ConfigError(HippoRAGError):
    """A setting is missing, unknown or invalid."""


class InputError(HippoRAGError):
    """Bad user input: an unreadable file, an empty passage, a malformed record."""


class StoreError(HippoRAGError):
    """The store cannot be opened, read or written."""


class StoreUnavailableError(StoreError):
    """The store's server cannot be reached (stopped, restarting, network), after the retries a safe
    retry allows. Nothing committed is lost: try again once the server is back (``index`` resumes)."""


class PhrasesVanishedError(StoreError):
    """A write's passages mention phrases it did not bring because they were stored when the indexer
    looked, and another writer deleted them before the write (nothing was written). The indexer
    encodes those phrases and writes the batch again."""


class StoreNotFoundError(StoreError):
    """A reading command or ``HippoRAG(create=False)`` met a store (or namespace) that does not exist."""


class ModelMismatchError(StoreError):
    """The store was built with another embedding model or dimension than the one configured."""


class SchemaVersionError(StoreError):
    """The store's schema version is not one this release can read."""


class ReembedPendingError(StoreError):
    """A re-embed was interrupted: the store holds vectors of two models and serves nothing until it ends."""


class CapabilityError(StoreError):
    """The server lacks something required (Neo4j version, vector indexes, GDS...)."""


class LLMError(HippoRAGError):
    """An LLM call failed for good (after retries, or with a non-retryable error)."""


class RetryableError(HippoRAGError):
    """A transient failure worth retrying (429, 5xx, timeouts, transient database errors)."""


class LLMOutputError(LLMError):
    """The LLM answered, but not with what the prompt asked for (malformed or partial JSON)."""


class ExtractionError(HippoRAGError):
    """Extraction failed for one passage; the message says why."""


class EmbeddingError(HippoRAGError):
    """The embedding model cannot be loaded or used."""
