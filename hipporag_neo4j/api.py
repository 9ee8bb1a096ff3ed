"""The Python API: one entry object, :class:`HippoRAG`.

    from hipporag_neo4j import HippoRAG
    with HippoRAG() as memory:                      # settings from HIPPORAG_* env / .env
        memory.index(["Thomas is a professor at Stanford.", "Thomas studies Alzheimer's disease."])
        result = memory.retrieve("Which Stanford professor works on Alzheimer's?")

Nothing is loaded or connected until first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from hipporag_neo4j.embedding.encoder import Embedder, create_embedder
from hipporag_neo4j.errors import ConfigError, InputError, StoreNotFoundError
from hipporag_neo4j.extraction.base import Extractor, QueryEntityExtractor
from hipporag_neo4j.indexing.inputs import passage_from_record, read_passages
from hipporag_neo4j.indexing.passage_ids import resolve
from hipporag_neo4j.indexing.pipeline import Indexer, IndexingOptions, ProgressCallback
from hipporag_neo4j.indexing.synonyms import finish_pending_synonyms
from hipporag_neo4j.models import (
    RETRIEVAL_MODES,
    Answer,
    IndexReport,
    LinkedPhrase,
    PassageFailure,
    PassageInfo,
    PassageInput,
    RetrievalMode,
    RetrievalResult,
    RetrievalStrategy,
    StoreStats,
)
from hipporag_neo4j.retrieval.clues import KnowledgeMemory
from hipporag_neo4j.retrieval.retriever import Retriever, check_graph_mode
from hipporag_neo4j.settings import Settings, load_settings
from hipporag_neo4j.stores.base import (
    DeleteReport,
    DropReport,
    EmbeddedKind,
    GraphJoin,
    GraphStore,
    ReembedState,
    StoreMeta,
)

if TYPE_CHECKING:
    from hipporag_neo4j.linking.linker import LinkReport

PassageLike = str | PassageInput | Mapping[str, Any]


def to_passage_input(item: PassageLike) -> PassageInput:
    """A str, PassageInput or dict record as a PassageInput; InputError naming a field of the wrong type."""
    return passage_from_record(item, "passage record")


def create_store(settings: Settings) -> GraphStore:
    from hipporag_neo4j.stores.memory.vector_index import VectorSearch

    s = settings.store
    search = VectorSearch(
        s.vector_search, s.vector_index_min_rows, s.vector_index_probes, s.vector_index_synonym_probes
    )
    if settings.backend == "neo4j":
        from hipporag_neo4j.stores.neo4j.store import Neo4jStore

        return Neo4jStore(settings.neo4j, vector_search=search)
    from hipporag_neo4j.stores.embedded import EmbeddedStore

    return EmbeddedStore(settings.embedded_store_path, vector_search=search)


def store_missing(store: GraphStore, settings: Settings) -> str | None:
    """Why ``store`` does not exist yet (a message naming it and how to make one), or None if it does.

    Reads only: an embedded store's directory is not created, a Neo4j namespace gets no schema."""
    command = ["hipporag-neo4j"]
    path = getattr(store, "path", None)
    embedded = isinstance(path, Path)
    if embedded and settings.store.path != Path(".hipporag/store"):
        command += ["--store", str(settings.store.path)]
    if settings.neo4j.namespace != "default":
        command += ["--namespace", settings.neo4j.namespace]
    how = f"make one with `{' '.join(command)} index FOLDER` (or HippoRAG.index in Python)"
    if isinstance(path, Path):
        from hipporag_neo4j.stores.embedded.store import DB_FILE

        if (path / DB_FILE).is_file() and store.meta() is not None:
            return None
        return (
            f"no store at {path}: nothing is indexed there. Point --store (HIPPORAG_STORE_PATH) at an "
            f"existing store, or {how}"
        )
    if store.meta() is not None:
        return None
    namespace = getattr(store, "namespace", settings.neo4j.namespace)
    return (
        f"namespace {namespace!r} does not exist in {settings.neo4j.uri or 'Neo4j'} (database "
        f"{settings.neo4j.database!r}): nothing is indexed under it. Check --namespace "
        f"(HIPPORAG_NAMESPACE), or {how}"
    )


def _check_choice(value: str | None, name: str, choices: tuple[str, ...]) -> None:
    if value is not None and value not in choices:
        raise InputError(f"unknown {name} {value!r}: use one of {', '.join(choices)}")


class HippoRAG:
    """HippoRAG memory over the configured store (Neo4j when ``neo4j.uri`` is set, else embedded)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store: GraphStore | None = None,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
        query_ner: QueryEntityExtractor | None = None,
        create: bool = True,
        writes: bool = True,
    ) -> None:
        """``create=False``: the store (or Neo4j namespace) must exist already; using one that does not
        raises :class:`StoreNotFoundError` naming it, and nothing is created (what reading commands use).
        ``writes=False``: this object only reads (the service's reader, beside a writer that does the
        writes): building the retriever leaves pending synonym edges to the writer."""
        self.settings = settings or load_settings()
        self.create = create
        self.writes = writes
        self._store = store
        self._embedder = embedder
        self._extractor = extractor
        self._query_ner = query_ner
        self._llm: Any = None
        self._opened: StoreMeta | None = None
        self._retriever: Retriever | None = None
        self._clue_memory: KnowledgeMemory | None = None

    # --- components, built on first use ------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = create_embedder(self.settings.embedding)
        return self._embedder

    @property
    def store(self) -> GraphStore:
        if self._store is None:
            self._store = create_store(self.settings)
        if self._opened is None:
            if not self.create:
                self.require_store()
            self._opened = self._store.open(self.embedder.model_name, self.embedder.dimension)
        return self._store

    def require_store(self) -> None:
        """Raise :class:`StoreNotFoundError` when the configured store does not exist; creates nothing."""
        if self._store is None:
            self._store = create_store(self.settings)
        problem = store_missing(self._store, self.settings)
        if problem is not None:
            raise StoreNotFoundError(problem)

    @property
    def llm(self) -> Any:
        """The LLM client (``hipporag_neo4j.llm.client.LLMClient``); ConfigError when none is configured."""
        if not self.settings.llm.configured:
            raise ConfigError("no LLM configured: set HIPPORAG_LLM_MODEL (and base URL / key) to use one")
        if self._llm is None:
            from hipporag_neo4j.llm.client import LLMClient

            self._llm = LLMClient(self.settings.llm)
        return self._llm

    def _spacy_query_ner(self) -> QueryEntityExtractor:
        from hipporag_neo4j.extraction.spacy_extractor import SpacyQueryNER

        x = self.settings.extraction
        return SpacyQueryNER(x.spacy_model, noun_chunks=x.query_noun_chunks, pipeline=x.query_ner_pipeline)

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            method = self.settings.extraction.method
            if method == "llm" or (method == "auto" and self.settings.llm.configured):
                from hipporag_neo4j.extraction.llm_extractor import LLMExtractor

                self._extractor = LLMExtractor(self.llm, json_mode=self.settings.llm.json_mode)
            else:
                from hipporag_neo4j.extraction.spacy_extractor import SpacyExtractor, SpacyFeatures

                x = self.settings.extraction
                self._extractor = SpacyExtractor(
                    x.spacy_model, features=SpacyFeatures(form_fields=x.form_fields)
                )
        return self._extractor

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            query_ner = self._query_ner
            fallback = None
            if query_ner is None:
                if self.settings.llm.configured:
                    from hipporag_neo4j.extraction.llm_extractor import LLMQueryNER

                    query_ner = LLMQueryNER(self.llm, json_mode=self.settings.llm.json_mode)
                    fallback = self._spacy_query_ner()
                else:
                    query_ner = self._spacy_query_ner()
            fact_filter = None
            if self.settings.llm.configured:
                from hipporag_neo4j.retrieval.recognition import LLMFactFilter

                fact_filter = LLMFactFilter(self.llm, json_mode=self.settings.llm.json_mode)
            if self.writes:
                self.finish_synonyms()  # edges an interrupted index run or re-embed left to compute
            self._retriever = Retriever(
                self.store,
                self.embedder,
                self.settings.retrieval,
                query_ner,
                fallback_ner=fallback,
                match_graph_phrases=self.settings.retrieval.match_query_phrases,
                fact_filter=fact_filter,
            )
        return self._retriever

    @property
    def store_object(self) -> GraphStore | None:
        """The store object held (None before first use); opens nothing."""
        return self._store

    def finish_synonyms(self) -> int:
        """Compute the synonym edges an interrupted index run or re-embed left; returns how many."""
        r = self.settings.retrieval
        return finish_pending_synonyms(
            self.store, r.synonym_top_k, r.synonym_threshold, r.synonym_same_numbers
        )

    def _indexing_options(self, *, chunk: bool = True) -> IndexingOptions:
        r, x = self.settings.retrieval, self.settings.extraction
        return IndexingOptions(
            synonym_threshold=r.synonym_threshold,
            synonym_top_k=r.synonym_top_k,
            synonym_same_numbers=r.synonym_same_numbers,
            max_passage_tokens=x.max_passage_tokens if chunk else None,
            on_long_passage=x.on_long_passage,
            max_chunks=x.max_chunks,
        )

    # --- public API ------------------------------------------------------------------------------
    def index(
        self, passages: Iterable[PassageLike], *, progress: ProgressCallback | None = None
    ) -> IndexReport:
        """Extract, embed and store passages. Re-running with the same passages does nothing new; an id
        indexed again with other content replaces its stored version (reported as ``updated``). A record
        that is not a passage is reported in ``failed`` and the others are indexed."""
        inputs: list[PassageInput] = []
        rejected: list[PassageFailure] = []
        for number, item in enumerate(passages):
            try:
                inputs.append(passage_from_record(item, f"input #{number}"))
            except InputError as exc:
                rejected.append(PassageFailure(passage_id=None, source=f"input #{number}", reason=str(exc)))
        store = self.store
        indexer = Indexer(store, self.embedder, self.extractor, self._indexing_options(), progress)
        report = indexer.index(inputs)
        report.failed[:0] = rejected
        if self._llm is not None:
            report.usage = self._llm.usage.model_copy()
        return report

    def index_files(
        self, paths: Sequence[str | Path], *, progress: ProgressCallback | None = None
    ) -> IndexReport:
        """Index JSON, JSONL, .txt/.md files and directories of them (what the CLI's ``index`` does):
        unreadable files, files over ``extraction.max_file_mb`` and bad records are reported in
        ``failed``, other file types in ``unsupported``, empty files in ``empty``."""
        limit = self.settings.extraction.max_file_mb
        read = read_passages([Path(p) for p in paths], progress, None if limit is None else int(limit * 1e6))
        report = self.index(read.passages, progress=progress)
        report.failed[:0] = read.failures
        report.unsupported = read.unsupported
        report.empty = read.empty
        return report

    def index_openie(
        self,
        path: str | Path,
        *,
        progress: ProgressCallback | None = None,
        only: Iterable[str] | None = None,
    ) -> IndexReport:
        """Index passages with a pre-extracted OpenIE file (HippoRAG's JSON or our JSONL); no LLM call.

        Passages are not chunked here: the recorded extraction belongs to the whole passage. ``only``: the
        ids of the file's passages to index (the others, and their records' failures, are left out).
        """
        from hipporag_neo4j.extraction.recorded import RecordedExtractor, load_recorded_extraction

        recorded = load_recorded_extraction(path)
        store = self.store
        indexer = Indexer(
            store, self.embedder, RecordedExtractor(recorded), self._indexing_options(chunk=False), progress
        )
        wanted = None if only is None else set(only)
        inputs = [
            PassageInput(id=p.id, text=p.text, title=p.title, metadata=p.metadata)
            for p in recorded.passages
            if wanted is None or p.id in wanted
        ]
        report = indexer.index(inputs)
        report.failed[:0] = [f for f in recorded.failures if wanted is None or f.passage_id in wanted]
        return report

    def retrieve(
        self,
        query: str = "",
        *,
        mode: RetrievalMode | None = None,
        top_k: int | None = None,
        strategy: RetrievalStrategy | None = None,
        seed_nodes: Sequence[str] = (),
        joined: bool | None = None,
        via: Sequence[str] | None = None,
    ) -> RetrievalResult:
        """Passages for ``query`` with ``mode`` (default: settings, ``hipporag2``); ``strategy`` ``ircot``
        or ``clues`` wraps the mode in an LLM loop (ConfigError without an LLM).

        Your own graph (after :meth:`link`; hipporag and hipporag2 modes): ``seed_nodes`` (elementIds on
        Neo4j, imported ids on the embedded store) seed PPR through the phrases linked to them, and the
        query may then be empty; ``joined`` runs PPR over the knowledge graph joined with your graph,
        through the relationship types ``via`` (default: settings ``joined_graph`` and
        ``joined_rel_types``; giving ``via`` implies ``joined``). Such results list the nodes linked to
        each passage (``linked_entities``)."""
        _check_choice(mode, "mode", tuple(RETRIEVAL_MODES))
        _check_choice(strategy, "strategy", get_args(RetrievalStrategy))
        query = (query or "").strip()
        r = self.settings.retrieval
        join = self._join(joined, via)
        if not query and not seed_nodes:
            raise InputError("empty query")
        if join is None and not seed_nodes:
            return self._retrieve(query, mode, top_k, strategy)
        check_graph_mode(mode or r.mode)
        from hipporag_neo4j.linking.graphs import open_enterprise_graph
        from hipporag_neo4j.linking.seeded import add_linked_entities, seed_links

        with open_enterprise_graph(self.settings, self.store) as graph:
            links, unlinked = seed_links(graph, seed_nodes, r.use_specificity)
            note = f"no phrase is linked to seed node(s) {', '.join(unlinked)}" if unlinked else None
            if not query and not links:
                result = RetrievalResult(query=query, mode=mode or r.mode, passages=[], note=note)
                result.joined = None if join is None else list(join.rel_types)
                return result
            result = self._retrieve(query, mode, top_k, strategy, join, links)
            if note:
                result.note = f"{result.note}; {note}" if result.note else note
            add_linked_entities(result, graph)
        return result

    def _join(self, joined: bool | None, via: Sequence[str] | None) -> GraphJoin | None:
        from hipporag_neo4j.models import check_identifier

        r = self.settings.retrieval
        if via is not None:
            joined = True if joined is None else joined
        if not (r.joined_graph if joined is None else joined):
            return None
        types = r.joined_rel_types if via is None else list(via)
        return GraphJoin(tuple(dict.fromkeys(check_identifier(t, "relationship type") for t in types)))

    def _retrieve(
        self,
        query: str,
        mode: RetrievalMode | None,
        top_k: int | None,
        strategy: RetrievalStrategy | None,
        join: GraphJoin | None = None,
        node_links: Sequence[LinkedPhrase] = (),
    ) -> RetrievalResult:
        r = self.settings.retrieval
        strategy = strategy or r.strategy
        top_k = top_k or r.top_k
        if strategy == "single":
            if join is None and not node_links:
                return self.retriever.retrieve(query, mode, top_k)
            return self.retriever.retrieve(query, mode, top_k, join=join, node_links=node_links)
        if not query:
            raise InputError(f"the {strategy} strategy needs a question, not seed nodes alone")
        llm, retriever = self.llm, self.retriever

        def one(text: str) -> RetrievalResult:
            if join is None and not node_links:
                return retriever.retrieve(text, mode, top_k)
            return retriever.retrieve(text, mode, top_k, join=join, node_links=node_links)

        if strategy == "ircot":
            from hipporag_neo4j.retrieval.ircot import retrieve_ircot

            return retrieve_ircot(one, llm, query, top_k, r.ircot_max_steps)
        from hipporag_neo4j.retrieval.clues import KnowledgeMemory, retrieve_with_clues

        if self._clue_memory is None and r.clue_memory:
            self._clue_memory = KnowledgeMemory(self.store)
        return retrieve_with_clues(
            one, llm, query, top_k, r.max_clues, self._clue_memory, json_mode=self.settings.llm.json_mode
        )

    def answer(
        self,
        query: str,
        *,
        mode: RetrievalMode | None = None,
        top_k: int | None = None,
        strategy: RetrievalStrategy | None = None,
    ) -> Answer:
        """Retrieve, then ask the reader LLM to answer from the top passages."""
        _ = self.llm  # fail before retrieving when no LLM is configured
        return self.answer_from(self.retrieve(query, mode=mode, top_k=top_k, strategy=strategy))

    def answer_from(self, retrieval: RetrievalResult) -> Answer:
        """Ask the reader LLM to answer ``retrieval.query`` from the retrieved passages (no new retrieval)."""
        from hipporag_neo4j.retrieval.answering import answer_question

        query = retrieval.query
        text, usage = answer_question(self.llm, query, [p.passage for p in retrieval.passages])
        return Answer(query=query, answer=text, retrieval=retrieval, usage=usage)

    # --- linking to your own graph (hipporag_neo4j.linking) ------------------------------------
    def link(self, label: str, prop: str = "name", *, min_similarity: float = 0.9) -> LinkReport:
        """SAME_AS links from phrases to your nodes with ``label``: exact normalised ``prop`` first, then
        embedding similarity >= ``min_similarity``. Idempotent; your nodes are only read."""
        from hipporag_neo4j.linking.graphs import open_enterprise_graph
        from hipporag_neo4j.linking.linker import link_nodes

        with open_enterprise_graph(self.settings, self.store) as graph:
            return link_nodes(self.store, self.embedder, graph, label, prop, min_similarity=min_similarity)

    def import_graph(self, path: str | Path) -> dict[str, int]:
        """Embedded store: import an entity graph (JSONL of nodes and relationships) to link to, into
        ``enterprise.sqlite`` beside the store; idempotent. On Neo4j your nodes are in the database."""
        from hipporag_neo4j.linking.embedded import EmbeddedEnterpriseGraph
        from hipporag_neo4j.linking.graph_file import load_entity_graph

        if self.settings.backend != "embedded":
            raise InputError(
                "importing a graph file is for the embedded store; on Neo4j, link to nodes in the database"
            )
        graph = load_entity_graph(path)
        with EmbeddedEnterpriseGraph(self.settings.embedded_store_path) as enterprise:
            return enterprise.import_graph(graph)

    def unlink(self, label: str | None = None) -> int:
        """Remove the SAME_AS links (to ``label`` nodes, or all); returns how many were removed."""
        from hipporag_neo4j.linking.graphs import open_enterprise_graph
        from hipporag_neo4j.linking.linker import unlink_nodes

        with open_enterprise_graph(self.settings, self.store) as graph:
            return unlink_nodes(graph, label)

    def about(
        self, node_ids: Sequence[str], *, via: Sequence[str] = (), top_k: int | None = None
    ) -> RetrievalResult:
        """Passages about nodes of your graph: :meth:`retrieve` with no question from ``seed_nodes``, over
        the joined graph through the relationship types ``via`` when given."""
        return self.retrieve(seed_nodes=node_ids, via=list(via) if via else None, top_k=top_k)

    def delete(self, passage_ids: Sequence[str]) -> DeleteReport:
        """Remove passages and everything only they supported (phrases, facts, synonym edges).

        Each key is a passage id, the id of a chunked passage (all its chunks go), or the path of an
        indexed file (every passage read from it); keys that name nothing are reported in ``missing``.
        """
        keys = list(dict.fromkeys(passage_ids))
        ids, missing = resolve(self.store, keys)
        report = self.store.delete_passages(ids) if ids else DeleteReport()
        report.missing = missing
        return report

    def drop(self) -> DropReport:
        """Delete this whole knowledge base: the embedded store's database and snapshot, or every node of
        the Neo4j namespace with its metadata, projections and (when no other namespace uses them) its
        vector indexes. Other namespaces and your own nodes stay. Raises :class:`StoreNotFoundError` when
        there is nothing to drop. Stop servers and indexers of it first."""
        if self._store is None:
            self._store = create_store(self.settings)
        self.require_store()
        report = self._store.drop_namespace()
        self._opened = None
        self._retriever = None
        self._clue_memory = None
        return report

    def list_passages(self, *, limit: int | None = None) -> list[PassageInfo]:
        """Stored passages ordered by id: id, title, source file, and for chunks their parent id."""
        found: list[PassageInfo] = []
        after = ""
        while limit is None or len(found) < limit:
            page = self.store.list_passages(after, 1000 if limit is None else min(1000, limit - len(found)))
            if not page:
                break
            found.extend(page)
            after = page[-1].id
        return found

    def stats(self) -> StoreStats:
        return self.store.stats()

    def reembed(self, progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
        """Re-encode every passage, phrase and fact with the configured embedding model, then recompute
        the synonym edges from the new phrase vectors.

        Resumable: the target model and the last id re-encoded per kind are recorded in the store after
        each batch, and the store refuses to serve (ReembedPendingError) until a run completes; an
        interrupted run continues where it stopped (with another model configured, it starts over).
        The counts are of what this run re-encoded."""
        if self._store is None:
            self._store = create_store(self.settings)
        if not self.create:
            self.require_store()
        store = self._store
        self._opened = None
        self._retriever = None
        if store.open_for_reembed() is None:
            raise ConfigError("the store is empty: nothing to re-embed")
        model, dim = self.embedder.model_name, self.embedder.dimension
        state = store.reembed_state()
        if state is None or (state.embedding_model, state.embedding_dim) != (model, dim):
            state = ReembedState(model, dim)
            store.set_reembed_state(state)
        counts: dict[str, int] = {}
        kinds: tuple[EmbeddedKind, ...] = ("passage", "phrase", "fact")
        for kind in kinds:
            counts[kind] = 0
            for batch in store.iter_texts(kind, 1024, after=state.done_through.get(kind, "")):
                ids = [i for i, _ in batch]
                store.set_embeddings(kind, ids, self.embedder.encode([t for _, t in batch]))
                state.done_through[kind] = ids[-1]
                store.set_reembed_state(state)  # after the vectors: a crash in between redoes one batch
                counts[kind] += len(batch)
                if progress:
                    progress(kind, counts[kind])
        store.finish_reembed(model, dim)
        self._opened = store.open(model, dim)
        self.finish_synonyms()
        return counts

    def doctor(self) -> dict[str, Any]:
        """What is configured and reachable, without changing anything."""
        from hipporag_neo4j.diagnostics.doctor import run_doctor

        return run_doctor(self.settings)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        self._opened = None
        self._retriever = None
        self._clue_memory = None

    def __enter__(self) -> HippoRAG:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
