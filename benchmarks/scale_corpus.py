"""A synthetic OpenIE file shaped like MuSiQue's published OpenIE, at any size, and a hash embedder.

The ``scale-suite`` builds its namespaces from this file through the product's own write path
(``HippoRAG.index_openie``), so what it measures is what a user's index run does. The file is HippoRAG's
JSON (``{"docs": [{"title", "text", "passage", "extracted_entities", "extracted_triples"}]}``, as
``hipporag_neo4j/extraction/recorded.py`` reads it).

Statistics taken from MuSiQue's published OpenIE (``openie_musique_corpus1890_gpt-3.5-turbo-1106.json``,
read at run time, never copied into the repository):

* per passage, the pair (triples, distinct phrases) of a real passage, drawn at random (their joint
  empirical distribution), and its share of phrases that are entities;
* the share of a passage's phrases already seen in an earlier passage (file order), the reuse rate;
* the words of phrase names (their empirical frequencies) and the predicates.

Generated:

* a reused phrase is drawn by preferential attachment (uniformly from every earlier mention, so in
  proportion to its mentions): the degree distribution is heavy-tailed, as in a growing corpus;
* a new phrase is a fresh name (1-4 words drawn by frequency: names share words, as real ones do) or,
  with probability ``variant_rate``, a variant of an earlier name (its family's base with one modifier:
  a year, a qualifier, an initial, ...), so near-duplicate names exist and synonym edges follow;
* subject: the passage's title phrase (its first) for ``title_subject_rate`` of the triples, another of
  its phrases otherwise; object: one of its other phrases; the predicate is a real one.

The hash embedder (``HashEmbedder``) maps a text to the signed hashes of its words' character 3-grams
in 384 dimensions (L2-normalised): names sharing most of their letters get cosine >= 0.8, unrelated
names about 0. It stands in for the encoder so that the figures are the store's, not a model's.

    python benchmarks/scale_corpus.py --size S --out /tmp/scale_S.json
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: ../shared/data beside the checkout (or beside the folder of a worktree, ../../shared/data)
SHARED_MUSIQUE = (
    next(
        (p for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if p.is_dir()),
        REPO.parent / "shared",
    )
    / "data"
    / "musique"
)
OPENIE_FILE = SHARED_MUSIQUE / "openie_musique_corpus1890_gpt-3.5-turbo-1106.json"

#: passages per size (S = MuSiQue's 1,890; M = HippoRAG 2's full MuSiQue, ~12k; L = ten times M)
SIZES: dict[str, int] = {"XS": 200, "S": 1_890, "M": 12_000, "L": 120_000}

MODIFIERS = (
    "jr", "sr", "ii", "iii", "inc", "ltd", "co", "fc", "city", "county", "river", "band", "album", "film",
    "song", "novel", "party", "club", "state", "north", "south", "east", "west", "new", "old", "the",
    "st", "de", "la", "von", "van", "el", "al", "mc", "sir", "dr", "lake", "mount", "port", "bay",
)  # fmt: skip
HASH_DIM = 384


# --- the hash embedder --------------------------------------------------------------------------
def _feature(gram: str) -> tuple[int, float]:
    digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % HASH_DIM, 1.0 if (value >> 63) & 1 else -1.0


class HashEmbedder:
    """Deterministic vectors from hashed character 3-grams (per word, with boundary marks), 384 dims.

    Similar names get similar vectors (cosine grows with the 3-grams they share), without a model: the
    scale suite measures the store. Implements the package's ``Embedder`` protocol."""

    model_name = "hash-char3-384"

    def __init__(self, dim: int = HASH_DIM) -> None:
        if dim != HASH_DIM:
            raise ValueError(f"HashEmbedder has {HASH_DIM} dimensions")
        self._features: dict[str, tuple[int, float]] = {}

    @property
    def dimension(self) -> int:
        return HASH_DIM

    @property
    def max_tokens(self) -> int | None:
        return None

    def token_count(self, text: str) -> int:
        return len(text.split())

    def vector(self, text: str) -> np.ndarray:
        out = np.zeros(HASH_DIM, dtype=np.float32)
        for word in text.lower().split():
            padded = f"<{word}>"
            for i in range(max(1, len(padded) - 2)):
                gram = padded[i : i + 3]
                feature = self._features.get(gram)
                if feature is None:
                    feature = self._features[gram] = _feature(gram)
                out[feature[0]] += feature[1]
        norm = float(np.linalg.norm(out))
        if norm == 0.0:
            out[0] = 1.0
            return out
        return out / norm

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, HASH_DIM), dtype=np.float32)
        return np.stack([self.vector(t) for t in texts])


# --- MuSiQue's statistics -------------------------------------------------------------------------
def _as_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return []
    return list(value) if isinstance(value, list | tuple) else []


def _norm(text: str) -> str:
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())


def musique_statistics(path: Path = OPENIE_FILE) -> dict[str, Any]:
    """Per passage (triples, distinct phrases, entities); reuse rate; word and predicate frequencies."""
    docs = json.loads(path.read_text())["docs"]
    shapes: list[tuple[int, int, int]] = []
    seen: set[str] = set()
    mentions = reused = 0
    words: Counter[str] = Counter()
    predicates: Counter[str] = Counter()
    for doc in docs:
        triples = [
            t for t in _as_list(doc.get("extracted_triples")) if isinstance(t, list | tuple) and len(t) == 3
        ]
        triples = [t for t in triples if all(isinstance(x, str) and _norm(x) for x in t)]
        entities = {_norm(e) for e in _as_list(doc.get("extracted_entities")) if isinstance(e, str)} - {""}
        phrases = {_norm(t[0]) for t in triples} | {_norm(t[2]) for t in triples} | entities
        if not triples or not phrases:
            continue
        shapes.append((len(triples), len(phrases), len(entities & phrases)))
        for phrase in phrases:
            mentions += 1
            reused += phrase in seen
            seen.add(phrase)
            words.update(phrase.split())
        predicates.update(" ".join(t[1].split()) for t in triples)
    return {
        "passages": len(shapes),
        "shapes": shapes,
        "reuse_rate": reused / mentions,
        "phrases": len(seen),
        "words": words,
        "predicates": predicates,
    }


# --- the generator --------------------------------------------------------------------------------
class CorpusGenerator:
    def __init__(
        self,
        stats: dict[str, Any],
        seed: int,
        variant_rate: float,
        title_subject_rate: float,
        attachment_boost: int,
    ) -> None:
        self.attachment_boost = attachment_boost
        self.rng = random.Random(seed)
        self.shapes: list[tuple[int, int, int]] = stats["shapes"]
        self.reuse_rate: float = stats["reuse_rate"]
        words: Counter[str] = stats["words"]
        self.words = list(words)
        self.word_weights = np.cumsum([words[w] for w in self.words], dtype=np.float64)
        predicates: Counter[str] = stats["predicates"]
        self.predicates = list(predicates)
        self.predicate_weights = np.cumsum([predicates[p] for p in self.predicates], dtype=np.float64)
        self.variant_rate = variant_rate
        self.title_subject_rate = title_subject_rate
        self.names: list[str] = []  # phrase number -> name
        self.family: list[str] = []  # phrase number -> its family's base name
        self.known: set[str] = set()
        self.mentions: list[int] = []  # one entry per (passage, phrase): preferential attachment

    def _weighted(self, items: list[str], cumulative: np.ndarray) -> str:
        x = self.rng.random() * float(cumulative[-1])
        return items[int(np.searchsorted(cumulative, x, side="right"))]

    def _fresh_name(self) -> str:
        count = self.rng.choices((1, 2, 3, 4), weights=(20, 45, 25, 10))[0]
        return " ".join(self._weighted(self.words, self.word_weights) for _ in range(count))

    def _variant(self, base: str) -> str:
        year = str(self.rng.randint(1800, 2025))
        modifier = self.rng.choice(MODIFIERS) if self.rng.random() < 0.7 else year
        return f"{base} {modifier}" if self.rng.random() < 0.75 else f"{modifier} {base}"

    def _new_phrase(self) -> int:
        for _ in range(20):
            if self.names and self.rng.random() < self.variant_rate:
                base = self.family[self.rng.randrange(len(self.names))]  # families grow with their size
                name, family = self._variant(base), base
            else:
                name = self._fresh_name()
                family = name
            if name not in self.known:
                break
        else:
            name = family = f"{self._fresh_name()} {len(self.names)}"
        self.known.add(name)
        self.names.append(name)
        self.family.append(family)
        return len(self.names) - 1

    def passage(self, number: int) -> dict[str, Any]:
        triples_n, phrases_n, entities_n = self.rng.choice(self.shapes)
        phrases: list[int] = []
        chosen: set[int] = set()
        reused: set[int] = set()
        for slot in range(phrases_n):
            pick = None
            if self.mentions and slot > 0 and self.rng.random() < self.reuse_rate:
                for _ in range(5):
                    candidate = self.mentions[self.rng.randrange(len(self.mentions))]
                    if candidate not in chosen:
                        pick = candidate
                        reused.add(pick)
                        break
            if pick is None:
                pick = self._new_phrase()
            phrases.append(pick)
            chosen.add(pick)
        self.mentions.extend(phrases)
        # a reused phrase gains more weight than a new one (attachment stronger than linear in its
        # mentions): without it the tail stays thin (MuSiQue's most-mentioned phrase: 300 of 25.5k)
        self.mentions.extend(p for p in phrases if p in reused for _ in range(self.attachment_boost))
        names = [self.names[p] for p in phrases]
        triples: list[list[str]] = []
        used: set[tuple[int, int, str]] = set()
        for t in range(triples_n):
            if len(names) == 1:
                s = o = 0
            else:
                s = 0 if self.rng.random() < self.title_subject_rate else self.rng.randrange(len(names))
                # every phrase gets into a triple first (as in MuSiQue), then objects at random
                o = t + 1 if t + 1 < len(names) else self.rng.randrange(len(names))
                if o == s:
                    o = (s + 1) % len(names)
            predicate = self._weighted(self.predicates, self.predicate_weights)
            if (s, o, predicate) in used:
                continue
            used.add((s, o, predicate))
            triples.append([names[s], predicate, names[o]])
        in_triples = {x for s, _, o in triples for x in (s, o)}
        # the entity list: as many as the real passage had, and every phrase no triple names
        alone = [n for n in names if n not in in_triples]
        entities = list(dict.fromkeys([*names[: max(1, entities_n)], *alone]))
        title = f"{names[0]} ({number})"
        text = " ".join(f"{s} {p} {o}." for s, p, o in triples)
        return {
            "idx": number,
            "title": title,
            "text": text,
            "passage": f"{title}\n{text}",
            "extracted_entities": entities,
            "extracted_triples": triples,
        }


def generate(
    passages: int,
    *,
    seed: int = 0,
    variant_rate: float = 0.7,
    title_subject_rate: float = 0.6,
    attachment_boost: int = 8,
    source: Path = OPENIE_FILE,
) -> dict[str, Any]:
    """The OpenIE document (HippoRAG's JSON) of ``passages`` synthetic passages, and what shaped it."""
    stats = musique_statistics(source)
    generator = CorpusGenerator(stats, seed, variant_rate, title_subject_rate, attachment_boost)
    docs = [generator.passage(n) for n in range(passages)]
    return {
        "docs": docs,
        "generator": {
            "passages": passages,
            "seed": seed,
            "variant_rate": variant_rate,
            "title_subject_rate": title_subject_rate,
            "attachment_boost": attachment_boost,
            "source": source.name,
            "source_passages": stats["passages"],
            "source_phrases": stats["phrases"],
            "reuse_rate": round(stats["reuse_rate"], 4),
            "phrases": len(generator.names),
            "triples": sum(len(d["extracted_triples"]) for d in docs),
        },
    }


def write_corpus(size: str | int, out: Path, *, seed: int = 0) -> dict[str, Any]:
    """Generate the corpus of ``size`` (a name of ``SIZES`` or a passage count) into ``out``; its summary."""
    passages = SIZES[size] if isinstance(size, str) else int(size)
    data = generate(passages, seed=seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, ensure_ascii=False))
    summary: dict[str, Any] = data["generator"]
    return summary


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="S", help=f"{', '.join(SIZES)} or a number of passages")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not OPENIE_FILE.is_file():
        sys.exit(f"MuSiQue's OpenIE not found: {OPENIE_FILE}")
    size: str | int = args.size if args.size in SIZES else int(args.size)
    print(json.dumps(write_corpus(size, args.out, seed=args.seed), indent=2))


if __name__ == "__main__":
    main()
