"""The containers the Neo4j tests start, without a Docker engine: every NEO4J_* variable of the
testcontainers fallback, the compose file and the CI workflow becomes a setting Neo4j knows (the image's
entrypoint maps ``_`` to ``.`` and ``__`` to ``_``, and Neo4j's strict config validation refuses unknown
settings at start), and the documentation says what the image does with NEO4J_PLUGINS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from hipporag_neo4j.stores.neo4j.capabilities import UNRESTRICTED_ENV, UNRESTRICTED_SETTING
from tests.support.neo4j_support import CONTAINER_ENV, NEO4J_IMAGE, NEO4J_LTS_IMAGE, setting_of_env

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[3]
DOCKER = REPO / "docker"
WORKFLOW = REPO / ".github" / "workflows" / "neo4j.yml"

#: The neo4j.conf settings our containers set (names from the Neo4j operations manual).
KNOWN_SETTINGS = {
    "dbms.security.procedures.unrestricted",
    "server.memory.heap.initial_size",
    "server.memory.heap.max_size",
    "server.memory.pagecache.size",
}


def test_the_entrypoint_mapping_rule() -> None:
    """Examples from docker-neo4j's docker-entrypoint.sh (its comment and its own advice)."""
    assert setting_of_env("NEO4J_server_tx__log_rotation_retention__policy") == (
        "server.tx_log.rotation.retention_policy"
    )
    assert setting_of_env("NEO4J_dbms_security_auth__minimum__password__length") == (
        "dbms.security.auth_minimum_password_length"
    )
    assert setting_of_env("NEO4J_dbms_security_procedures__unrestricted") == (
        "dbms.security.procedures_unrestricted"  # the testcontainers variable before issue 9: unknown
    )
    assert setting_of_env("NEO4J_PLUGINS") is None and setting_of_env("NEO4J_AUTH") is None
    assert setting_of_env(UNRESTRICTED_ENV) == UNRESTRICTED_SETTING


def _settings(env: dict[str, Any]) -> set[str]:
    return {s for k in env if (s := setting_of_env(k)) is not None}


def test_the_test_container_sets_only_known_settings() -> None:
    assert _settings(CONTAINER_ENV) == {UNRESTRICTED_SETTING}
    assert set(CONTAINER_ENV[UNRESTRICTED_ENV].split(",")) == {"gds.*", "apoc.*"}


def test_compose_and_workflow_set_only_known_settings_and_the_same_plugins() -> None:
    compose = yaml.safe_load((DOCKER / "docker-compose.yml").read_text(encoding="utf-8"))
    service_env = compose["services"]["neo4j"]["environment"]
    assert _settings(service_env) <= KNOWN_SETTINGS and UNRESTRICTED_SETTING in _settings(service_env)
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    job = workflow["jobs"]["neo4j"]
    workflow_env = job["services"]["neo4j"]["env"]
    assert _settings(workflow_env) == {UNRESTRICTED_SETTING}
    assert {e["image"] for e in job["strategy"]["matrix"]["include"]} == {NEO4J_IMAGE, NEO4J_LTS_IMAGE}
    plugins = {env["NEO4J_PLUGINS"].replace(" ", "") for env in (service_env, workflow_env, CONTAINER_ENV)}
    assert plugins == {'["graph-data-science","apoc"]'}


def test_the_docs_say_what_neo4j_plugins_does_and_claim_no_unsourced_bundling() -> None:
    readme = (DOCKER / "README.md").read_text(encoding="utf-8")
    compose = (DOCKER / "docker-compose.yml").read_text(encoding="utf-8")
    workflow = WORKFLOW.read_text(encoding="utf-8")
    support = (REPO / "tests" / "support" / "neo4j_support.py").read_text(encoding="utf-8")
    for text in (readme, compose, support):
        assert "since 2025.05" not in text and "APOC under products/" not in text
    assert "labs/" in readme and "products/" in readme  # APOC core under labs/, GDS under products/
    for text in (readme, workflow):
        assert "network" in text  # a jar the image does not ship is downloaded at start
    assert "dbms.security.procedures.unrestricted" in readme
