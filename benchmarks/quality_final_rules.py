"""Final-ranking rules over saved rankings: how the walk's list and dense's list could be combined at the
top (issue 28's lead "a final ranking that lets dense's confident top survive"), without re-running
retrieval. Reads the per-question top-10 lists that ``quality_topk.py`` saved for ``dense`` and a
``hipporag2`` variant, applies each rule, and reports R@2 / R@5 / AR@5 per set and the paired bootstrap
95% CI of each rule against the walk's own list over the union of the offline sets.

    python benchmarks/quality_final_rules.py --cache /work/oq-cache --variant title-phrase
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

Rule = Callable[[list[str], list[str]], list[str]]
OFFLINE = ("hotpotqa", "musique-offline")


def _metrics(ranked: list[str], gold: list[str]) -> list[float]:
    g = set(gold)
    return [len(g & set(ranked[:2])) / len(g), len(g & set(ranked[:5])) / len(g), float(g <= set(ranked[:5]))]


def dense_first_into_top2(walk: list[str], dense: list[str]) -> list[str]:
    """Dense's rank 1 at rank 2 when the walk has it lower."""
    if dense[0] in walk[:2]:
        return walk
    return [walk[0], dense[0], *[x for x in walk[1:] if x != dense[0]]]


def interleave(n: int) -> Rule:
    """The first ``n`` places taken in turn from the walk and dense (skipping repeats), then the walk's."""

    def rule(walk: list[str], dense: list[str]) -> list[str]:
        out: list[str] = []
        for i in range(n):
            out.extend([next((x for x in (walk if i % 2 == 0 else dense) if x not in out), walk[0])][:1])
        out = list(dict.fromkeys(out))
        return out + [x for x in walk if x not in out]

    return rule


def rrf(alpha: float, k: int = 60) -> Rule:
    """Reciprocal-rank fusion of the two lists (``alpha`` on the walk)."""

    def rule(walk: list[str], dense: list[str]) -> list[str]:
        score: dict[str, float] = {}
        for i, x in enumerate(walk):
            score[x] = score.get(x, 0.0) + alpha / (k + i + 1)
        for i, x in enumerate(dense):
            score[x] = score.get(x, 0.0) + (1 - alpha) / (k + i + 1)
        return sorted(score, key=lambda x: -score[x])

    return rule


def reorder_top(k: int, by: str) -> Rule:
    """The walk's top ``k`` kept as a set (so R@5 and AR@5 cannot move for k = 5), re-ordered by dense's
    rank (``dense``) or by the sum of the two ranks (``ranksum``)."""

    def rule(walk: list[str], dense: list[str]) -> list[str]:
        rank = {x: i for i, x in enumerate(dense)}
        top = walk[:k]
        if by == "dense":
            top = sorted(top, key=lambda x: rank.get(x, len(dense)))
        else:
            top = sorted(top, key=lambda x: (walk.index(x) + rank.get(x, len(dense)), walk.index(x)))
        return top + walk[k:]

    return rule


RULES: dict[str, Rule] = {
    "walk (as is)": lambda w, d: w,
    "dense rank 1 into the top 2": dense_first_into_top2,
    "interleave the first 2": interleave(2),
    "interleave the first 4": interleave(4),
    "RRF 0.5": rrf(0.5),
    "RRF 0.7": rrf(0.7),
    "walk's top 5 by dense rank": reorder_top(5, "dense"),
    "walk's top 5 by rank sum": reorder_top(5, "ranksum"),
    "walk's top 3 by dense rank": reorder_top(3, "dense"),
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--variant", default="default", help="The hipporag2 run (variant[@store-key]).")
    parser.add_argument("--dataset", nargs="*", default=[*OFFLINE, "musique-openie"])
    args = parser.parse_args()
    name, _, key = args.variant.partition("@")
    rows: dict[str, dict[str, np.ndarray]] = {r: {} for r in RULES}
    for ds in args.dataset:
        sub = ds if not key or ds == "musique-openie" else f"{ds}-{key}"
        dense = json.loads((args.cache / "runs" / sub / "dense.json").read_text(encoding="utf-8"))
        walk = json.loads((args.cache / "runs" / sub / f"{name}.json").read_text(encoding="utf-8"))
        for rule_name, rule in RULES.items():
            rows[rule_name][ds] = np.array(
                [_metrics(rule(walk[q]["ranked"], dense[q]["ranked"]), dense[q]["gold"]) for q in dense]
            )
    rng = np.random.default_rng(0)
    base = np.concatenate([rows["walk (as is)"][ds] for ds in args.dataset if ds in OFFLINE])
    idx = rng.integers(0, len(base), size=(10_000, len(base)))
    print(f"hipporag2 run {args.variant}; R@2 / R@5 / AR@5 per set; union of {', '.join(OFFLINE)} - walk:")
    for rule_name, per_set in rows.items():
        cells = [f"{ds} " + " / ".join(f"{100 * v:.1f}" for v in m.mean(0)) for ds, m in per_set.items()]
        diff = np.concatenate([per_set[ds] for ds in args.dataset if ds in OFFLINE]) - base
        ci = [
            f"{100 * diff[:, i].mean():+.1f} [{100 * np.quantile(diff[idx, i].mean(1), 0.025):+.1f},"
            f" {100 * np.quantile(diff[idx, i].mean(1), 0.975):+.1f}]"
            for i in range(3)
        ]
        print(f"{rule_name:28} | {' | '.join(cells)} | union {' / '.join(ci)}")


if __name__ == "__main__":
    main()
