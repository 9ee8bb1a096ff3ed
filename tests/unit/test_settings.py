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


DOCKER_ENV_EXAMPLE = Path(__file__).resolve().parents[2] / "docker" / ".env.example"


def test_the_docker_env_example_works_as_a_dotenv(tmp_path: Path) -> None:
    """The README's Neo4j set-up: `cp .env.example .env`, then run hipporag-neo4j in that directory."""
    env = tmp_path / ".env"
    env.write_text(DOCKER_ENV_EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    s = load_settings(env_file=env)
    assert s.neo4j.uri == "neo4j://localhost:7687" and s.backend == "neo4j"
    assert s.neo4j.password.get_secret_value() == "change-me-please"
    assert s.neo4j.namespace == "default"


def test_other_tools_keys_in_dotenv_are_ignored(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        "OPENAI_API_KEY=sk-other\nDATABASE_URL=postgres://x\nexport HIPPORAG_LLM_MODEL=gpt-4o-mini\n"
        "hipporag_retrieval__top_k=7\n",
        encoding="utf-8",
    )
    s = load_settings(env_file=env)
    assert s.llm.model == "gpt-4o-mini" and s.retrieval.top_k == 7


def test_environment_beats_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / ".env"
    env.write_text("HIPPORAG_NAMESPACE=from_file\nHIPPORAG_RETRIEVAL__TOP_K=7\n", encoding="utf-8")
    monkeypatch.setenv("HIPPORAG_NAMESPACE", "from_env")
    s = load_settings(env_file=env)
    assert s.neo4j.namespace == "from_env" and s.retrieval.top_k == 7


def test_unknown_and_invalid_names_in_dotenv_are_named_with_the_file(tmp_path: Path) -> None:
    env = tmp_path / "kb.env"
    env.write_text("HIPPORAG_RETRIEVAL__TOPK=3\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"unknown setting HIPPORAG_RETRIEVAL__TOPK.*HIPPORAG_RETRIEVAL__TOP_K"
    ):
        load_settings(env_file=env)
    env.write_text("HIPPORAG_NEO4J_DATABASE=my-db\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"neo4j\.database \(HIPPORAG_NEO4J_DATABASE\) from .*kb\.env"):
        load_settings(env_file=env)


def test_a_single_underscore_suggests_the_right_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPORAG_RETRIEVAL_TOP_K", "3")
    with pytest.raises(ConfigError, match="did you mean HIPPORAG_RETRIEVAL__TOP_K"):
        load_settings()


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("HIPPORAG_NEO4J_URI", "http://localhost:7474", "not a Neo4j URI"),
        ("HIPPORAG_NEO4J_URI", "localhost:7687", "not a Neo4j URI"),
        ("HIPPORAG_STORE__BACKEND", "postgres", "embedded"),
        ("HIPPORAG_NAMESPACE", "proj-a", "letters, digits, underscore"),
        ("HIPPORAG_EMBEDDING__BATCH_SIZE", "zero", "integer"),
        ("HIPPORAG_LLM__TEMPERATURE", "3", "less than or equal to 2"),
        ("HIPPORAG_LLM__JSON_MODE", "maybe", "boolean"),
        ("HIPPORAG_EXTRACTION__MAX_CHUNKS", "0", "greater than or equal to 1"),
        ("HIPPORAG_RETRIEVAL__MODE", "graph", "hipporag"),
        ("HIPPORAG_RETRIEVAL__SYNONYM_THRESHOLD", "1.5", "less than or equal to 1"),
    ],
)
def test_every_invalid_value_is_named_by_the_variable_the_readme_teaches(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, shown: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert f"({name}) from the environment" in message and shown in message


def test_every_setting_has_a_variable_that_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """No field is unreachable from the environment: its README name is accepted as known."""
    from hipporag_neo4j.settings import Settings, env_name

    for group, info in Settings.model_fields.items():
        for field in info.annotation.model_fields:  # type: ignore[union-attr]
            name = env_name(group, field)
            default = getattr(getattr(load_settings(), group), field)
            if default is None or not isinstance(default, str | int | float | bool):
                continue
            monkeypatch.setenv(name, str(default).lower() if isinstance(default, bool) else str(default))
            load_settings()
            monkeypatch.delenv(name)


def test_a_bad_value_for_any_typed_setting_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every number, flag and choice: a value of the wrong kind is refused naming the variable."""
    from hipporag_neo4j.settings import Settings, env_name

    checked = 0
    for group, info in Settings.model_fields.items():
        for field, spec in info.annotation.model_fields.items():  # type: ignore[union-attr]
            if spec.annotation not in (int, float, bool, int | None, float | None) and "Literal" not in str(
                spec.annotation
            ):
                continue
            name = env_name(group, field)
            monkeypatch.setenv(name, "not-a-valid-value")
            with pytest.raises(ConfigError, match=rf"{group}\.{field} \({name}\) from the environment"):
                load_settings()
            monkeypatch.delenv(name)
            checked += 1
    assert checked >= 30  # the numbers, flags and choices of all six groups
