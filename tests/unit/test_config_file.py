"""A configuration file as a user writes one: hipporag.toml in the working directory (or --config FILE),
the settings under the names the variables use, each over the defaults and under .env, the environment
and the options; ``doctor`` says which file and which variables set what; a wrong key is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipporag_neo4j.errors import ConfigError
from hipporag_neo4j.settings import load_settings


@pytest.mark.unit
def test_the_file_sets_settings_under_the_variables_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("hipporag.toml").write_text(
        '[store]\npath = "kb"\n[extraction]\nmax_chunks = 40\n[retrieval]\ntop_k = 7\n'
        "[neo4j.aura]\nsession_ttl_minutes = 30\n",
        encoding="utf-8",
    )
    Path(".env").write_text("HIPPORAG_RETRIEVAL__TOP_K=9\n", encoding="utf-8")
    monkeypatch.setenv("HIPPORAG_EXTRACTION__MAX_CHUNKS", "50")
    settings = load_settings()
    assert settings.store.path == Path("kb") and settings.neo4j.aura.session_ttl_minutes == 30
    assert settings.retrieval.top_k == 9 and settings.extraction.max_chunks == 50  # .env, environment win
    assert settings.sources() == {
        "extraction.max_chunks": "HIPPORAG_EXTRACTION__MAX_CHUNKS from the environment",
        "neo4j.aura.session_ttl_minutes": "HIPPORAG_NEO4J__AURA__SESSION_TTL_MINUTES from hipporag.toml "
        "([neo4j.aura] session_ttl_minutes)",
        "retrieval.top_k": "HIPPORAG_RETRIEVAL__TOP_K from .env",
        "store.path": "HIPPORAG_STORE_PATH from hipporag.toml ([store] path)",
    }


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[store]\npaht = 'kb'\n", "hipporag.toml: unknown setting 'paht' in [store]"),
        ("[stor]\npath = 'kb'\n", "unknown setting 'stor' in the top level"),
        ("top_k = 3\n", "unknown setting 'top_k' in the top level (it has: embedding, "),
        ("top_k = 3\n", "; did you mean [retrieval] top_k?"),
        ("store = 3\n", "hipporag.toml: store is a table ([store]), not a value"),
        ("[retrieval]\ntop_k = 0\n", "retrieval.top_k (HIPPORAG_RETRIEVAL__TOP_K) from hipporag.toml"),
        ("[store\n", "cannot read configuration file hipporag.toml"),
    ],
)
def test_a_wrong_file_is_an_error_naming_file_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("hipporag.toml").write_text(text, encoding="utf-8")
    with pytest.raises(
        ConfigError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")
    ):
        load_settings()


@pytest.mark.unit
def test_the_readme_example_file_is_valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    example = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    Path("hipporag.toml").write_text(example, encoding="utf-8")
    settings = load_settings()
    assert settings.store.path == Path("kb") and settings.extraction.max_chunks == 5000
    assert all(how.endswith(")") and "from hipporag.toml" in how for how in settings.sources().values())
