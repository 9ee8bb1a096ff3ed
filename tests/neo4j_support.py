"""A Neo4j server for the ``neo4j``-marked tests, or a skip that says why there is none.

In order: ``HIPPORAG_TEST_NEO4J_URI`` (with ``..._USER``, ``..._PASSWORD``, ``..._DATABASE``; the GitHub
workflow sets them for its service container), else a testcontainers Neo4j with GDS and APOC started
once per test session when a Docker engine answers, else ``pytest.skip`` with the reason.

Every call to :func:`neo4j_settings_or_skip` gives a fresh random namespace, so tests never see each
other's data. All namespaces of a database share the vector indexes and so one embedding dimension:
the Neo4j tests all use :data:`TEST_EMBEDDING_DIM` (the conformance suite's hash embedder).
"""

from __future__ import annotations

import atexit
import os
import uuid
from typing import Any

import pytest

from hipporag_neo4j.settings import Neo4jSettings

#: Pinned current image (GDS 2.17+ there: weighted source nodes). NEO4J_PLUGINS makes the image's
#: entrypoint copy the plugin jars it ships (GDS under products/, APOC core under labs/, per the image's
#: neo4j-plugins.json) and download any it does not ship (network needed).
NEO4J_IMAGE = "neo4j:2025.11.2-community"
#: Neo4j 5.26 LTS with GDS 2.13 (unweighted sources: the linear fallback).
NEO4J_LTS_IMAGE = "neo4j:5.26.12-community"

#: Environment of the test container, as the compose file and the CI workflow set it. The entrypoint
#: turns NEO4J_<name> into a setting with ``_`` -> ``.`` and ``__`` -> ``_`` (docker-neo4j
#: docker-entrypoint.sh), and Neo4j refuses unknown settings at start (strict validation), so the
#: single-underscore form is the one that means dbms.security.procedures.unrestricted.
CONTAINER_ENV = {
    "NEO4J_PLUGINS": '["graph-data-science","apoc"]',
    "NEO4J_dbms_security_procedures_unrestricted": "gds.*,apoc.*",
}
TEST_PASSWORD = "hipporag-test-password"
TEST_EMBEDDING_DIM = 16

_container: dict[str, Any] = {}


def _docker_reason() -> str | None:
    """None when a Docker engine answers, else why not."""
    try:
        import docker  # testcontainers' dependency

        docker.from_env().ping()
    except Exception as exc:  # any failure means: no usable engine here
        return f"no Docker engine answers ({type(exc).__name__}: {exc})"
    return None


def _start_container() -> tuple[str, str, str]:
    if "uri" not in _container:
        try:
            from testcontainers.community.neo4j import Neo4jContainer
        except ImportError:  # testcontainers before the community/ split
            from testcontainers.neo4j import Neo4jContainer
        image = os.environ.get("HIPPORAG_TEST_NEO4J_IMAGE", NEO4J_IMAGE)
        container = Neo4jContainer(image, password=TEST_PASSWORD)
        for key, value in CONTAINER_ENV.items():
            container.with_env(key, value)
        container.start()
        atexit.register(container.stop)
        _container.update(uri=container.get_connection_url(), user="neo4j", container=container)
    return _container["uri"], _container["user"], TEST_PASSWORD


def setting_of_env(name: str) -> str | None:
    """The neo4j.conf setting the image's entrypoint writes for environment variable ``name`` (None for
    the variables it reads itself), by its rule: strip NEO4J_, ``_`` -> ``.``, then ``..`` -> ``_``."""
    if not name.startswith("NEO4J_") or name in {
        "NEO4J_AUTH",
        "NEO4J_PLUGINS",
        "NEO4J_ACCEPT_LICENSE_AGREEMENT",
    }:
        return None
    return name.removeprefix("NEO4J_").replace("_", ".").replace("..", "_")


def neo4j_server_or_skip() -> tuple[str, str, str, str]:
    """(uri, user, password, database) of a reachable server, or skip the test with the reason."""
    uri = os.environ.get("HIPPORAG_TEST_NEO4J_URI")
    if uri:
        return (
            uri,
            os.environ.get("HIPPORAG_TEST_NEO4J_USER", "neo4j"),
            os.environ.get("HIPPORAG_TEST_NEO4J_PASSWORD", ""),
            os.environ.get("HIPPORAG_TEST_NEO4J_DATABASE", "neo4j"),
        )
    reason = _docker_reason()
    if reason is not None:
        pytest.skip(f"Neo4j tests need HIPPORAG_TEST_NEO4J_URI or Docker for testcontainers: {reason}")
    uri, user, password = _start_container()
    return uri, user, password, "neo4j"


def random_namespace() -> str:
    return "t" + uuid.uuid4().hex[:16]


def neo4j_settings_or_skip(**overrides: Any) -> Neo4jSettings:
    """Settings for a reachable server with a fresh namespace (skips the test when there is none)."""
    uri, user, password, database = neo4j_server_or_skip()
    values: dict[str, Any] = {
        "uri": uri,
        "user": user,
        "password": password,
        "database": database,
        "namespace": random_namespace(),
    }
    values.update(overrides)
    return Neo4jSettings(**values)
