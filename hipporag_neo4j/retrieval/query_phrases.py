"""Graph phrases that occur verbatim in a query: a way in when NER finds nothing or cuts a name short."""

from __future__ import annotations

from hipporag_neo4j.stores.base import GraphStore, PhraseHit
from hipporag_neo4j.text import normalize_phrase

# Function words that never make a phrase on their own (a match made only of these is dropped).
STOPWORDS = frozenset(
    """a an the of in on at to for from by with about as into like through after over between out against
    during without before under around among and or but nor so yet is are was were be been being am do does
    did has have had having who whom whose which what when where why how that this these those it its he she
    they them his her their him i you we us our your my me there here than then also not no yes one first
    last many much more most other some such any each every both either neither same own""".split()  # noqa: SIM905
)


def ngrams(tokens: list[str], max_len: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(len(tokens)) for j in range(i + 1, min(len(tokens), i + max_len) + 1)]


def phrases_in_query(
    store: GraphStore, query: str, *, max_len: int = 8, max_passage_share: float = 0.01, min_count: int = 5
) -> list[PhraseHit]:
    """Longest graph phrases found in the query, left to right, without overlaps.

    Generic phrases (mentioned by more than ``max_passage_share`` of the passages, and by more than
    ``min_count``) are skipped: "country" or "author" would spread the walk over the whole graph.
    """
    tokens = normalize_phrase(query).split()
    spans = [(i, j) for i, j in ngrams(tokens, max_len) if not all(t in STOPWORDS for t in tokens[i:j])]
    found = store.phrases_by_name(" ".join(tokens[i:j]) for i, j in spans)
    if not found:
        return []
    limit = max(min_count, int(max_passage_share * max(store.passage_count(), 1)))
    taken = [False] * len(tokens)
    hits: list[PhraseHit] = []
    for i, j in sorted(spans, key=lambda s: (-(s[1] - s[0]), s[0])):
        hit = found.get(" ".join(tokens[i:j]))
        if hit is None or any(taken[i:j]) or hit.passage_count > limit:
            continue
        taken[i:j] = [True] * (j - i)
        hits.append(hit)
    return hits
