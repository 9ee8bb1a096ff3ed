"""docker/ without a Docker engine: the compose file is valid against the Compose Specification schema
and says what the store needs (pinned image with GDS and APOC, auth from .env, healthcheck, volume); the
.env example, Browser style, test-container image and CI workflow agree with it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.neo4j_support import NEO4J_IMAGE, NEO4J_LTS_IMAGE

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[3]
DOCKER = REPO / "docker"
SCHEMA = REPO.parent / "shared" / "schemas" / "compose-spec.json"
WORKFLOW = REPO / ".github" / "workflows" / "neo4j.yml"


def compose() -> dict[str, Any]:
    data = yaml.safe_load((DOCKER / "docker-compose.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def neo4j_service() -> dict[str, Any]:
    service = compose()["services"]["neo4j"]
    assert isinstance(service, dict)
    return service


def test_compose_file_is_valid_against_the_compose_spec() -> None:
    if not SCHEMA.exists():
        pytest.skip(
            f"Compose Specification schema not found at {SCHEMA} (shared/ is not beside the checkout)"
        )
    import jsonschema

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(compose()), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def test_the_schema_check_catches_a_broken_file() -> None:
    if not SCHEMA.exists():
        pytest.skip(f"Compose Specification schema not found at {SCHEMA}")
    import jsonschema

    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    for key, value in (("portz", ["7687:7687"]), ("volumes", "neo4j-data:/data"), ("healthcheck", ["x"])):
        broken = compose()
        broken["services"]["neo4j"][key] = value
        assert list(validator.iter_errors(broken)), f"{key}={value!r} should be invalid"


def test_image_is_pinned_and_matches_the_test_container() -> None:
    image = neo4j_service()["image"]
    assert re.fullmatch(r"neo4j:\d{4}\.\d{2}\.\d+-community", image), image
    year, month = (int(x) for x in image.split(":")[1].split(".")[:2])
    assert (year, month) >= (2025, 4)  # GDS 2.17+ (weighted source nodes) runs on Neo4j 2025.04+
    assert image == NEO4J_IMAGE


def test_plugins_auth_healthcheck_and_volume() -> None:
    service = neo4j_service()
    env = service["environment"]
    assert set(json.loads(env["NEO4J_PLUGINS"])) == {"graph-data-science", "apoc"}
    assert env["NEO4J_AUTH"].startswith("neo4j/${NEO4J_PASSWORD:?")  # from .env, required
    assert not any(k.startswith("NEO4J_") and k not in _known_neo4j_env() for k in env)
    check = service["healthcheck"]
    assert "gds.version()" in " ".join(check["test"]) and check["retries"] >= 10
    assert any(v.endswith(":/data") for v in service["volumes"])
    assert "neo4j-data" in compose()["volumes"]
    ports = " ".join(service["ports"])
    assert "7687" in ports and "7474" in ports


def _known_neo4j_env() -> set[str]:
    """Our NEO4J_* variables: the image reads NEO4J_AUTH/NEO4J_PLUGINS and turns the rest into settings."""
    return {
        "NEO4J_AUTH",
        "NEO4J_PLUGINS",
        "NEO4J_dbms_security_procedures_unrestricted",
        "NEO4J_server_memory_heap_initial__size",
        "NEO4J_server_memory_heap_max__size",
        "NEO4J_server_memory_pagecache_size",
    }


def test_env_example_defines_every_variable_the_compose_file_uses() -> None:
    text = (DOCKER / "docker-compose.yml").read_text(encoding="utf-8")
    used = set(re.findall(r"(?<!\$)\$\{([A-Z_][A-Z0-9_]*)", text))
    example = dict(
        line.split("=", 1)
        for line in (DOCKER / ".env.example").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )
    assert used and used <= set(example), used - set(example)
    assert (
        example["NEO4J_PASSWORD"] == example["HIPPORAG_NEO4J_PASSWORD"]
        and len(example["NEO4J_PASSWORD"]) >= 8
    )
    gitignore = (REPO / ".gitignore").read_text(encoding="utf-8").split()
    assert ".env" in gitignore  # docker/.env holds the real password


def test_browser_style_colours_and_captions_our_labels() -> None:
    grass = (DOCKER / "browser-style.grass").read_text(encoding="utf-8")
    blocks = dict(re.findall(r"(node\.\w+|relationship\.\w+)\s*\{(.*?)\n\}", grass, flags=re.DOTALL))
    assert grass.count("{") == grass.count("}")
    # passages and facts by the caption the writes store (a title-less passage has one too: its file name)
    for label, caption in (("Passage", "{caption}"), ("Phrase", "{name}"), ("Fact", "{caption}")):
        block = blocks[f"node.{label}"]
        assert "color:" in block and f'caption: "{caption}";' in block
    assert blocks["node.Passage"] != blocks["node.Phrase"]
    assert {"relationship.RELATION", "relationship.SYNONYM", "relationship.MENTIONS"} <= set(blocks)
    # the joined graph: links to your nodes, and the labels of the README's and the linking demo's graph
    assert 'caption: "{method} {score}";' in blocks["relationship.SAME_AS"]
    for label in ("Account", "Customer", "Company"):
        assert 'caption: "{name}";' in blocks[f"node.{label}"]
        assert blocks[f"node.{label}"] not in (blocks["node.Passage"], blocks["node.Phrase"])


def test_ci_workflow_runs_the_neo4j_tests_against_both_gds_generations() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    job = workflow["jobs"]["neo4j"]
    images = {entry["image"] for entry in job["strategy"]["matrix"]["include"]}
    assert images == {NEO4J_IMAGE, NEO4J_LTS_IMAGE}
    service = job["services"]["neo4j"]
    assert service["image"] == "${{ matrix.image }}"
    assert set(json.loads(service["env"]["NEO4J_PLUGINS"])) == {"graph-data-science", "apoc"}
    assert "--health-cmd" in service["options"]
    assert job["env"]["HIPPORAG_TEST_NEO4J_URI"].startswith("bolt://localhost:7687")
    runs = " ".join(step.get("run", "") for step in job["steps"])
    assert "-m neo4j" in runs
