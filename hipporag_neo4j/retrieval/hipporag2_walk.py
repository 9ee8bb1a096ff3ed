"""HippoRAG 2's walk (Gutiérrez et al. 2025, arXiv 2502.14802; seed 002), store-agnostic: the stages the
``hipporag2`` mode (:mod:`hipporag_neo4j.retrieval.modes.hipporag2`) runs, from the query's facts to the
seeded PPR over phrases and passages.

1. Fact retrieval: the query vector against the stored fact vectors, the best ``fact_top_k``.
2. Recognition memory: an LLM keeps the facts relevant to the query (at most 4); without an LLM every
   retrieved fact is kept (the paper's "w/o filter" ablation).
3. Reset probabilities: each kept fact's subject and object get the fact's score divided by their passage
   count (a phrase in many facts keeps the mean of their scores), the best ``seed_phrases`` kept; every
   passage node gets its min-max-normalised dense score x ``passage_node_weight`` (in a store of more
   than ``passage_seed_top_n`` passages, only the best that many: :func:`passage_seed_count`). With
   ``entity_seeds`` (our default) the phrases the query's named entities link to are seeded too, with
   HippoRAG 1's weight 1 / passage count: fact retrieval alone often misses the entity the question
   names (measured on MuSiQue and HotpotQA, README). With ``title_seeds`` (our default, issue 28) the
   passages whose title is such a linked phrase are seeded too, with the phrase's weight
   (:func:`named_passage_seeds`).
4. PPR over phrases + passage nodes; passages ranked by their own PPR score, optionally combined with the
   dense ranking (``combine_alpha``, by rank or by normalised score: ``combine_by``). No fact kept: dense
   retrieval, and the explanation says so.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.errors import HippoRAGError
from hipporag_neo4j.models import FactScore, LinkedPhrase, PhraseSeed
from hipporag_neo4j.retrieval.fusion import NO_SCORES, ScoreMap, floor_below, min_max, mix, rank_fusion
from hipporag_neo4j.settings import RetrievalSettings
from hipporag_neo4j.stores.base import FactHit, GraphJoin, GraphView, PassageScore, Vector, WalkParams
from hipporag_neo4j.stores.memory.scores import PassageSeeds, PassageTitles

log = logging.getLogger(__name__)

#: Keeps the facts relevant to a query: (query, candidates) -> the kept candidates, or raises
#: :class:`~hipporag_neo4j.errors.HippoRAGError` when the filter cannot answer (anything else is a bug).
FactFilter = Callable[[str, list[FactHit]], list[FactHit]]


@dataclass
class HippoRAG2Run:
    """Scores of every passage the walk (or dense fallback) ranked, and why."""

    scores: ScoreMap
    graph_scores: ScoreMap
    dense_scores: ScoreMap
    facts: list[FactScore]
    seeds: list[PhraseSeed]
    passage_seeds: int
    used_dense_only: bool
    notes: list[str] = field(default_factory=list)


def fact_scores(hits: list[FactHit], *, floor_at_weakest: bool) -> list[float]:
    """Fact similarities min-max normalised, as HippoRAG 2 does over every fact. A vector index returns
    only the best few, so the range is taken from them: the best scores 1 and, with ``floor_at_weakest``,
    the weakest candidate 0 (without a recognition filter this keeps near-ties from weighing as much as the
    best fact); otherwise the floor is 0 similarity (the filter already chose, so every kept fact counts)."""
    if not hits:
        return []
    sims = [hit.similarity for hit in hits]
    top = max(sims)
    low = min(sims) if floor_at_weakest else 0.0
    if top <= low:
        return [1.0 if top > 0 else 0.0 for _ in hits]
    return [max(s - low, 0.0) / (top - low) for s in sims]


def phrase_seeds(
    store: GraphView, facts: list[FactHit], scores: list[float], top_n: int
) -> tuple[dict[str, float], list[PhraseSeed]]:
    """Reset weights of the kept facts' phrases: the mean score of the facts a phrase is in, divided by
    the number of passages that mention it; the ``top_n`` phrases by mean score."""
    by_phrase: dict[str, tuple[str, list[float]]] = {}
    for fact, score in zip(facts, scores, strict=True):
        for phrase_id, name in ((fact.subject_id, fact.subject), (fact.object_id, fact.object)):
            by_phrase.setdefault(phrase_id, (name, []))[1].append(score)
    found = store.phrases_by_name(name for name, _ in by_phrase.values())
    counts = {hit.id: hit.passage_count for hit in found.values()}
    mean = {pid: sum(values) / len(values) for pid, (_, values) in by_phrase.items()}
    kept = sorted(mean, key=lambda pid: (-mean[pid], pid))[:top_n]
    seeds: dict[str, float] = {}
    explained: list[PhraseSeed] = []
    for pid in kept:
        count = counts.get(pid, 0)
        weight = mean[pid] / count if count > 0 else mean[pid]
        if weight <= 0:
            continue
        seeds[pid] = weight
        explained.append(PhraseSeed(phrase=by_phrase[pid][0], score=mean[pid], passages=count, weight=weight))
    return seeds, explained


def passage_seed_count(settings: RetrievalSettings, n_passages: int) -> int:
    """How many passage nodes the walk seeds: every passage in a store of at most ``passage_seed_top_n``
    passages (unset: always every one), else the best ``passage_seed_top_n`` by dense score.

    Seeding every passage makes the walk's first push rounds whole-graph mat-vecs and needs every
    passage's dense score (3.9 s per query at 1M phrases, benchmarks/README.md); it also lets the
    passages' reset mass (``passage_node_weight`` x the sum of their normalised scores) grow with the
    store until it drowns the phrase seeds. The default (2,000) is above both evaluation corpora
    (MuSiQue 1,890 passages, HotpotQA 994), where the weights were chosen, so their rankings are
    unchanged; a larger store seeds as many passages as they did."""
    top_n = settings.passage_seed_top_n
    return n_passages if top_n is None else min(top_n, n_passages)


def passage_seed_weights(dense: ScoreMap, seeded: int, weight: float) -> PassageSeeds:
    """Reset weights of the best ``seeded`` passages of ``dense`` (best first): each min-max normalised
    x ``weight``, zeros dropped. When ``dense`` holds every passage the range is theirs (HippoRAG 2's
    rule); otherwise it is the range of the ``dense`` rows given (the best ``seeded`` and at least one
    more, whose score is the floor), so the weakest seed keeps a positive weight. Seeds at the positions
    of ``dense``'s table: a store's own for its array scores, which it reads without a lookup by id."""
    if seeded <= 0 or not dense:
        return PassageSeeds(dense.table, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float64))
    normalised = min_max(dense).values_[:seeded]  # over the rows given, as said above
    keep = normalised > 0
    return PassageSeeds(dense.table, dense.positions[:seeded][keep], normalised[keep] * weight)


#: a passage the question names is looked for among dense retrieval's best this many (its title is read)
TITLE_CANDIDATES = 100
_LEADING_ARTICLE = re.compile(r"^(the|a|an) ", re.IGNORECASE)
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def title_key(title: str) -> str:
    """A title as the phrase that names it: without a trailing disambiguation ("Twins (group)") and a
    leading article ("The Brisbane Institute"), normalised as phrases are."""
    core = _DISAMBIGUATION.sub("", title).strip() or title
    return normalize_phrase(_LEADING_ARTICLE.sub("", core.strip()))


def named_passage_seeds(
    store: GraphView, dense: Sequence[PassageScore], links: list[LinkedPhrase]
) -> dict[str, float]:
    """Reset weights for the passages the question names: those among dense's best
    :data:`TITLE_CANDIDATES` whose title (:func:`title_key`) is a phrase a query entity links to, each with
    that phrase's seed weight. The walk reaches such a page only through the phrase, whose mass every
    passage mentioning it shares alike; seeded, the page the question names keeps its place above a passage
    that only mentions the entity or its neighbours."""
    by_phrase: dict[str, float] = {}
    for link in links:
        key = title_key(link.phrase)
        by_phrase[key] = max(by_phrase.get(key, 0.0), link.weight)
    if not by_phrase:
        return {}
    candidates = [p.passage_id for p in dense[:TITLE_CANDIDATES]]
    if isinstance(store, PassageTitles):  # the titles alone
        titles = store.passage_titles(candidates)
    else:
        titles = {pid: passage.title for pid, passage in store.get_passages(candidates).items()}
    named: dict[str, float] = {}
    for pid, title in titles.items():
        weight = by_phrase.get(title_key(title)) if title else None
        if weight is not None and weight > 0:
            named[pid] = weight
    return named


def question_scores(
    store: GraphView,
    query_vector: Vector | None,
    settings: RetrievalSettings,
    limit: int,
    n_passages: int,
    timings: dict[str, float],
) -> tuple[list[FactHit], Sequence[PassageScore]]:
    """What needs the question's vector alone: the candidate facts (stage 1) and the dense scores that
    seed the passage nodes and are the fallback (every passage's where every passage is seeded;
    otherwise the best seeded + 1, the one more being the normalisation's floor)."""
    s = settings
    t = time.perf_counter()
    candidates = store.nearest_facts(query_vector, s.fact_top_k) if query_vector is not None else []
    timings["fact_search"] = time.perf_counter() - t
    seeded = passage_seed_count(s, n_passages)
    fetch = n_passages if seeded >= n_passages else min(n_passages, max(seeded + 1, limit))
    t = time.perf_counter()
    dense = store.dense_passage_scores(query_vector, fetch) if query_vector is not None else []
    timings["dense_search"] = time.perf_counter() - t
    return candidates, dense


def retrieve_hipporag2(
    store: GraphView,
    query: str,
    query_vector: Vector | None,
    settings: RetrievalSettings,
    limit: int,
    n_passages: int,
    fact_filter: FactFilter | None,
    timings: dict[str, float],
    entity_links: list[LinkedPhrase] | None = None,
    join: GraphJoin | None = None,
    scored: tuple[list[FactHit], Sequence[PassageScore]] | None = None,
) -> HippoRAG2Run:
    """The four stages above for one query; ``limit`` passages are scored (at least the top-k asked for).
    Without a query vector (seed nodes alone) there are no facts and no passage seeds: the walk starts
    from ``entity_links``. ``join``: over the joined graph. ``scored``: :func:`question_scores` of the
    same arguments, when already computed (beside the entities' linking)."""
    s = settings
    if scored is None:
        scored = question_scores(store, query_vector, s, limit, n_passages, timings)
    candidates, dense = scored
    notes: list[str] = []

    kept = candidates
    filtered = False
    if fact_filter is not None and candidates:
        t = time.perf_counter()
        try:
            kept = fact_filter(query, candidates)
            filtered = True
        except HippoRAGError as exc:  # a failed or malformed LLM answer keeps the unfiltered facts
            notes.append(f"recognition filter failed ({exc}); used the {len(candidates)} retrieved facts")
            log.warning(notes[-1])
            kept = candidates
        timings["recognition_filter"] = time.perf_counter() - t
    kept_ids = {f.id for f in kept}
    candidate_scores = fact_scores(candidates, floor_at_weakest=not filtered)
    score_of = {f.id: sc for f, sc in zip(candidates, candidate_scores, strict=True)}
    facts_explained = [
        FactScore(
            subject=f.subject,
            predicate=f.predicate,
            object=f.object,
            similarity=f.similarity,
            score=score_of[f.id],
            kept=f.id in kept_ids,
        )
        for f in candidates
    ]

    seeded = passage_seed_count(s, n_passages)
    dense_raw = ScoreMap.of(dense)

    seeds, seeds_explained = phrase_seeds(store, kept, [score_of[f.id] for f in kept], s.seed_phrases)
    for link in entity_links or []:  # the query's own entities (explained as the result's links)
        seeds[link.phrase_id] = seeds.get(link.phrase_id, 0.0) + link.weight
    if not seeds:
        reason = "no fact retrieved" if not candidates else "no fact kept"
        notes.append(f"{reason} and no query entity linked: ranked by dense retrieval")
        return HippoRAG2Run(dense_raw, NO_SCORES, dense_raw, facts_explained, [], 0, True, notes)

    reset = passage_seed_weights(dense_raw, seeded, s.passage_node_weight)
    if s.title_seeds and entity_links:
        reset = reset.plus(named_passage_seeds(store, dense, entity_links))

    t = time.perf_counter()
    walked = store.passage_node_scores(seeds, reset, WalkParams.of(s), limit, s.explain_phrases, join)
    timings["ppr_and_aggregation"] = time.perf_counter() - t
    graph = ScoreMap.of(walked)
    if s.combine_alpha is None:
        scores = graph
    elif s.combine_by == "rank":
        scores = rank_fusion(graph, dense_raw, s.combine_alpha)
    else:
        floor = floor_below(dense_raw, n_passages)
        scores = mix(min_max(graph, floor=0.0), min_max(dense_raw, floor), s.combine_alpha)
    return HippoRAG2Run(scores, graph, dense_raw, facts_explained, seeds_explained, len(reset), False, notes)
