"""Plain pydantic data models shared by the pipeline, the stores, the API and the CLI."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from hipporag_neo4j.errors import InputError

#: The retrieval modes by name, each the module ``hipporag_neo4j/retrieval/modes/<name>.py`` (a class behind
#: :class:`hipporag_neo4j.retrieval.modes.base.Mode`). Adding a mode is that module and one line here: the
#: CLI, REST, MCP and the settings' validation read the names from this registry.
RETRIEVAL_MODES: dict[str, str] = {
    "hipporag2": "HippoRAG 2: query-fact matching, phrase and passage seeds, PPR over phrases and passages",
    "hipporag": "HippoRAG (the paper): query entities linked to phrases, PPR from them by node specificity",
    "dense": "cosine of the query's and the passages' embeddings",
    "ensemble": "the graph, averaged with dense when a query entity links with low confidence",
    "hybrid": "the graph and dense always mixed, retrieval.hybrid_weight on the graph",
}


def check_mode(value: str) -> str:
    """``value`` if it names a registered retrieval mode, else a ValueError naming the modes."""
    if value not in RETRIEVAL_MODES:
        raise ValueError(f"unknown retrieval mode {value!r}: use one of {', '.join(RETRIEVAL_MODES)}")
    return value


#: A registered retrieval mode's name (validated against :data:`RETRIEVAL_MODES`; an enum in JSON schemas).
RetrievalMode = Annotated[
    str, AfterValidator(check_mode), WithJsonSchema({"type": "string", "enum": list(RETRIEVAL_MODES)})
]
RetrievalStrategy = Literal["single", "ircot", "clues"]


#: Labels, property names and relationship types are spliced into queries on Neo4j: only these pass.
SAFE_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}\Z")


def check_identifier(value: str, what: str) -> str:
    if not SAFE_IDENTIFIER.match(value):
        raise InputError(
            f"{what} {value!r} is not a plain identifier "
            "(letters, digits and underscores, not starting with a digit)"
        )
    return value


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: Longest passage id (UTF-8 bytes; chunks add ``#<n>``). On Neo4j the id is half of an index key, and a
#: key over about 8 KB fails the whole write batch; the embedded store keeps the same limit (same answers).
MAX_PASSAGE_ID_BYTES = 2048


class PassageInput(_Model):
    """A passage to index. ``id`` is the passage's identity: indexing the same id again with other text
    replaces the stored version. It defaults to a hash of the text (files get their path instead, see
    :mod:`hipporag_neo4j.indexing.inputs`); ``title`` is optional."""

    text: str
    id: str | None = None
    title: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: str | None = Field(None, description="Where it came from (file and record), for reports only.")


class Passage(_Model):
    """A passage as stored."""

    id: str
    text: str
    title: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


#: The formats of the files read as text, by suffix: their passages record no format (the metadata they
#: always had), so ``list`` takes it from the source file's name.
TEXT_FORMATS = {".txt": "txt", ".md": "md", ".json": "json", ".jsonl": "jsonl"}


class PassageInfo(_Model):
    """A stored passage as ``list`` shows it: identity and origin, not the text."""

    id: str
    title: str | None = None
    source: str | None = Field(None, description="The file it was read from (metadata 'source').")
    parent_id: str | None = Field(None, description="For a chunk: the id of the passage it was cut from.")
    chunk: int | None = Field(None, description="For a chunk: its position in the parent, from 0.")
    chars: int = Field(0, description="Length of the text in characters.")
    format: str | None = Field(
        None,
        description="The source file's format: pdf, docx, html, or txt, md, json, jsonl (None when the "
        "passage came from no file, or from one of none of these).",
    )
    encoding: str | None = Field(
        None, description="The encoding the source file was decoded from (None for PDF, DOCX and no file)."
    )

    @classmethod
    def of(cls, id: str, title: str | None, metadata: dict[str, Any], chars: int) -> PassageInfo:
        parent, chunk, source = metadata.get("parent_id"), metadata.get("chunk"), metadata.get("source")
        kind, encoding = metadata.get("format"), metadata.get("encoding")
        if encoding is None and source is not None and kind is None:
            encoding = "utf-8"  # a text file: its encoding is recorded only when it is not UTF-8
        if kind is None and source is not None:
            suffix = str(source).rpartition("/")[2].rpartition(".")[2].lower()
            kind = TEXT_FORMATS.get(f".{suffix}")
        return cls(
            id=id,
            title=title,
            source=str(source) if source is not None else None,
            parent_id=str(parent) if parent is not None else None,
            chunk=chunk if isinstance(chunk, int) else None,
            chars=chars,
            format=str(kind) if kind is not None else None,
            encoding=str(encoding) if encoding is not None else None,
        )


class Triple(_Model):
    subject: str
    predicate: str
    object: str

    def as_tuple(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)

    def text(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"


class Extraction(_Model):
    """What extraction found in one passage: named entities and (normalised) OpenIE triples."""

    passage_id: str
    entities: list[str] = Field(default_factory=list)
    triples: list[Triple] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list, description="Why invalid raw triples were dropped.")


class PassageFailure(_Model):
    passage_id: str | None
    source: str | None = Field(None, description="File and record, or passage title.")
    reason: str


class Usage(_Model):
    """LLM token usage over a run."""

    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class IndexReport(_Model):
    """Outcome of one ``index`` call: nothing is lost silently."""

    indexed: list[str] = Field(default_factory=list, description="Passage ids newly indexed.")
    skipped: list[str] = Field(
        default_factory=list, description="Already stored with the same content, or repeated in the input."
    )
    updated: list[str] = Field(
        default_factory=list,
        description="Ids whose stored version had other content and was replaced (new parts in 'indexed').",
    )
    removed: list[str] = Field(
        default_factory=list, description="Stored passage ids removed as old versions of updated ones."
    )
    failed: list[PassageFailure] = Field(default_factory=list)
    chunked: dict[str, list[str]] = Field(
        default_factory=dict, description="Long passages split: source id -> chunk ids."
    )
    unsupported: list[str] = Field(
        default_factory=list, description="Files in the given folders skipped for their type."
    )
    empty: list[str] = Field(
        default_factory=list,
        description="Files skipped for having no text (no bytes, or only white space): not a failure.",
    )
    new_phrases: int = 0
    new_facts: int = 0
    new_synonym_edges: int = 0
    usage: Usage = Field(default_factory=Usage)
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds per stage.")


class LinkedPhrase(_Model):
    """A query entity linked to a graph phrase."""

    query_entity: str
    phrase_id: str
    phrase: str
    similarity: float
    weight: float = Field(description="Reset probability before normalisation (specificity or 1).")


class PhraseScore(_Model):
    phrase: str
    score: float = Field(description="PPR score x occurrences in this passage.")


class FactScore(_Model):
    """A fact retrieved for the query (``hipporag2``), and whether recognition memory kept it."""

    subject: str
    predicate: str
    object: str
    similarity: float = Field(description="Cosine of the query and the fact.")
    score: float = Field(description="Similarity scaled so the best retrieved fact scores 1.")
    kept: bool = Field(description="Kept by the recognition filter (every fact is kept without an LLM).")


class PhraseSeed(_Model):
    """A phrase the ``hipporag2`` walk starts from."""

    phrase: str
    score: float = Field(description="Mean score of the kept facts it is in.")
    passages: int = Field(description="Passages that mention it.")
    weight: float = Field(description="Reset probability before normalisation: score / passages.")


class ClueHit(_Model):
    """A clue (clue-driven retrieval) and its rank for this passage."""

    clue: str
    rank: int


class Explanation(_Model):
    query_entities: list[str] = Field(default_factory=list)
    linked: list[LinkedPhrase] = Field(default_factory=list)
    top_phrases: list[PhraseScore] = Field(default_factory=list)
    graph_score: float | None = None
    dense_score: float | None = None
    facts: list[FactScore] = Field(default_factory=list, description="hipporag2: facts retrieved and kept.")
    seeds: list[PhraseSeed] = Field(default_factory=list, description="hipporag2: phrases seeded.")
    passage_seeds: int = Field(0, description="hipporag2: passage nodes seeded with their dense score.")
    clues: list[ClueHit] = Field(default_factory=list, description="Clue retrieval: clues that found it.")
    steps: list[int] = Field(default_factory=list, description="IRCoT: steps whose retrieval found it.")
    note: str | None = None


class LinkedEntity(_Model):
    """A node of your own graph linked (SAME_AS, by ``hipporag-neo4j link``) to a phrase the passage
    mentions."""

    node_id: str = Field(description="elementId on Neo4j; the imported id on the embedded store.")
    labels: list[str]
    name: str | None = Field(None, description="The node's `name` property, when it has one.")
    via_phrase: str = Field(description="The phrase of the passage linked to the node.")
    score: float = Field(description="The link's score (1 for an exact name match).")
    method: str = Field(description="How the link was made: exact or embedding.")


class RetrievedPassage(_Model):
    rank: int
    passage: Passage
    score: float
    explanation: Explanation
    linked_entities: list[LinkedEntity] = Field(
        default_factory=list,
        description="With seed nodes or the joined graph: your nodes linked to the phrases it mentions.",
    )


class RetrievalResult(_Model):
    query: str
    mode: RetrievalMode
    strategy: RetrievalStrategy = "single"
    passages: list[RetrievedPassage]
    query_entities: list[str] = Field(default_factory=list)
    linked: list[LinkedPhrase] = Field(default_factory=list)
    used_dense_fallback: bool = Field(
        False,
        description="Dense scores rank some of these passages: dense mode, a mix (hybrid; ensemble on an "
        "uncertain link), or the graph reaching too few passages (filled from dense; 'note' says which).",
    )
    facts: list[FactScore] = Field(default_factory=list, description="hipporag2: facts retrieved and kept.")
    seeds: list[PhraseSeed] = Field(default_factory=list, description="hipporag2: phrases seeded.")
    clues: list[str] = Field(default_factory=list, description="Clue retrieval: the clues the LLM drafted.")
    thoughts: list[str] = Field(default_factory=list, description="IRCoT: the reasoning sentences, in order.")
    seed_links: list[LinkedPhrase] = Field(
        default_factory=list,
        description="Seed nodes: the phrases linked to them (query_entity = node id, similarity = link "
        "score), seeded like the query's entities.",
    )
    joined: list[str] | None = Field(
        None, description="PPR ran over the joined graph with these relationship types of yours."
    )
    note: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)


class Answer(_Model):
    query: str
    answer: str
    retrieval: RetrievalResult
    usage: Usage = Field(default_factory=Usage)


class StoreStats(_Model):
    backend: str
    location: str
    passages: int
    phrases: int
    facts: int
    relation_edges: int
    synonym_edges: int
    mentions: int
    embedding_model: str | None
    embedding_dim: int | None
    schema_version: int | None
    extra: dict[str, Any] = Field(default_factory=dict)
