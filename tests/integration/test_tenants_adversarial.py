"""A tenant trying to reach another namespace of the same embedded store with crafted ids, titles,
metadata, entity names, labels and property names (tests/support/tenant_attacks.py); the same scenario
runs on Neo4j in tests/neo4j/test_neo4j_tenants.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j.api import HippoRAG
from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.settings import load_settings
from tests.support import tenant_attacks
from tests.support.fakes import FixedQueryNER, HashEmbedder, TableExtractor
from tests.support.pipeline_support import dump_embedded

pytestmark = pytest.mark.integration


def test_crafted_input_never_crosses_namespaces_on_the_embedded_store(tmp_path: Path) -> None:
    root = tmp_path / "kb"

    def open_memory(namespace: str) -> HippoRAG:
        settings = load_settings({"store": {"path": str(root)}, "neo4j": {"namespace": namespace}})
        return HippoRAG(
            settings,
            embedder=HashEmbedder(),
            extractor=TableExtractor(tenant_attacks.table()),
            query_ner=FixedQueryNER({}),
        )

    def raw(namespace: str) -> object:
        return dump_embedded(root / "namespaces" / namespace)

    tenant_attacks.run(open_memory, "tenant_a", "tenant_b", raw)
    assert sorted(p.name for p in (root / "namespaces").iterdir()) == ["tenant_a", "tenant_b"]


@pytest.mark.parametrize("name", ["../tenant_b", "tenant_b/..", "tenant_b\n", "tenant_б", "/etc", "a" * 64])
def test_a_crafted_namespace_name_is_refused_before_any_file_is_touched(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="not a plain name"):
        load_settings({"store": {"path": str(tmp_path / "kb")}, "neo4j": {"namespace": name}})
    assert not (tmp_path / "kb").exists()
