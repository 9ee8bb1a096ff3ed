from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.settings import load_settings

pytestmark = pytest.mark.unit


def test_defaults_use_the_embedded_store_and_paper_hyperparameters() -> None:
    s = load_settings()
    assert s.backend == "embedded"
    assert s.retrieval.damping == 0.5
    assert s.retrieval.synonym_threshold == 0.8
    assert not s.llm.configured


def test_nested_and_short_env_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_RETRIEVAL__DAMPING", "0.7")
    monkeypatch.setenv("HIPPORAG_NEO4J_URI", "neo4j+s://example.databases.neo4j.io")
    s = load_settings()
    assert s.retrieval.damping == 0.7
    assert s.backend == "neo4j"


def test_overrides_beat_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_RETRIEVAL__TOP_K", "3")
    assert load_settings({"retrieval": {"top_k": 9}}).retrieval.top_k == 9


def test_dotenv_file_is_read(tmp_path: Path) -> None:
    env = tmp_path / "custom.env"
    env.write_text("HIPPORAG_LLM__MODEL=gpt-4o-mini\nHIPPORAG_LLM__API_KEY=sk-secret-value\n")
    s = load_settings(env_file=env)
    assert s.llm.model == "gpt-4o-mini"
    assert s.llm.configured


def test_invalid_value_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_RETRIEVAL__DAMPING", "1.5")
    with pytest.raises(ConfigError, match=r"retrieval\.damping \(HIPPORAG_RETRIEVAL__DAMPING\)"):
        load_settings()


def test_unknown_setting_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_RETRIEVAL__DAMPNG", "0.5")
    with pytest.raises(ConfigError, match="DAMPNG"):
        load_settings()
    monkeypatch.delenv("HIPPORAG_RETRIEVAL__DAMPNG")
    monkeypatch.setenv("HIPPORAG_RETRIEVALS__TOP_K", "5")
    with pytest.raises(ConfigError, match="no group 'retrievals'"):
        load_settings()


def test_namespace_must_be_a_safe_identifier() -> None:
    with pytest.raises(ConfigError, match="namespace"):
        load_settings({"neo4j": {"namespace": "x`) DETACH DELETE n //"}})


def test_neo4j_backend_without_uri_fails_at_start() -> None:
    with pytest.raises(ConfigError, match="HIPPORAG_NEO4J_URI"):
        load_settings({"store": {"backend": "neo4j"}})


def test_secrets_are_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_NEO4J_PASSWORD", "hunter2-secret")
    monkeypatch.setenv("HIPPORAG_LLM_API_KEY", "sk-live-secret")
    s = load_settings()
    shown = repr(s) + str(s.redacted())
    assert "hunter2-secret" not in shown and "sk-live-secret" not in shown
    assert s.neo4j.password.get_secret_value() == "hunter2-secret"


def test_the_aura_group_is_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two levels deep (neo4j.aura.*): the names the aura engine's errors and the README tell users."""
    monkeypatch.setenv("HIPPORAG_NEO4J__PPR_ENGINE", "aura")
    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__CLIENT_ID", "client")
    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__CLIENT_SECRET", "aura-secret")
    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__SESSION_TTL_MINUTES", "30")
    s = load_settings()
    assert s.neo4j.ppr_engine == "aura" and s.neo4j.aura.client_id == "client"
    assert s.neo4j.aura.session_ttl_minutes == 30 and "aura-secret" not in str(s.redacted())
    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__CLIENT_SECRT", "x")
    with pytest.raises(ConfigError, match=r"neo4j\.aura has no field 'client_secrt'"):
        load_settings()
    monkeypatch.delenv("HIPPORAG_NEO4J__AURA__CLIENT_SECRT")
    monkeypatch.setenv("HIPPORAG_NEO4J__AURA__CLOUD_PROVIDER", "gcp")  # without cloud_region
    with pytest.raises(ConfigError, match="cloud_region are set together"):
        load_settings()
