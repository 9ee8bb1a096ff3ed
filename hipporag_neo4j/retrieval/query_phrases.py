"""Graph phrases that occur verbatim in a query: a way in when NER finds nothing or cuts a name short."""

from __future__ import annotations

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.stores.base import GraphView, PhraseHit

# Function words that never make a phrase on their own (a match made only of these is dropped).
STOPWORDS = frozenset(
    """a an the of in on at to for from by with about as into like through after over between out against
    during without before under around among and or but nor so yet is are was were be been being am do does
    did has have had having who whom whose which what when where why how that this these those it its he she
    they them his her their him i you we us our your my me there here than then also not no yes one first
    last many much more most other some such any each every both either neither same own""".split()  # noqa: SIM905
)


#: the longest name matched with ``names_only`` (a book title may run to a dozen words)
MAX_NAME_WORDS = 16


def ngrams(tokens: list[str], max_len: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(len(tokens)) for j in range(i + 1, min(len(tokens), i + max_len) + 1)]


def capitalised_tokens(query: str) -> list[bool]:
    """For each token of ``normalize_phrase(query)``: whether the query writes it capitalised (or as a
    number), i.e. as part of a name. Normalisation works word by word, so the words align."""
    flags: list[bool] = []
    for word in query.split():
        parts = normalize_phrase(word).split()
        flags.extend(word.lstrip("\"'“‘(")[:1].isupper() or part.isdigit() for part in parts)
    return flags


def phrases_in_query(
    store: GraphView,
    query: str,
    *,
    max_len: int = 8,
    max_passage_share: float = 0.01,
    min_count: int = 5,
    names_only: bool = False,
) -> list[PhraseHit]:
    """Longest graph phrases found in the query, left to right, without overlaps.

    Generic phrases (mentioned by more than ``max_passage_share`` of the passages, and by more than
    ``min_count``) are skipped: "country" or "author" would spread the walk over the whole graph.
    With ``names_only``, only spans the query writes as a name are matched: every word that is not a
    function word is capitalised or a number ("Alexander and the Terrible, Horrible, No Good, Very Bad
    Day" whole, not "author"), so a title the query names links even where NER cuts it up.
    """
    tokens = normalize_phrase(query).split()
    longest = max(max_len, MAX_NAME_WORDS) if names_only else max_len
    spans = [(i, j) for i, j in ngrams(tokens, longest) if not all(t in STOPWORDS for t in tokens[i:j])]
    if names_only:
        capital = capitalised_tokens(query)
        if len(capital) == len(tokens):
            spans = [
                (i, j)
                for i, j in spans
                if all(capital[k] or tokens[k] in STOPWORDS for k in range(i, j))
                and capital[i]
                and capital[j - 1]
            ]
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
