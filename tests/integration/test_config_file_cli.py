"""A configuration file as a user writes one: hipporag.toml in the working directory (or --config FILE),
the settings under the names the variables use, each over the defaults and under .env, the environment
and the options; ``doctor`` says which file and which variables set what; a wrong key is named.

Split by tier from the former tests/test_config_file.py: this file holds the CLI test; the rest is in
tests/unit/test_config_file.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hipporag_neo4j.cli.main import main


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.mark.integration
def test_the_cli_reads_the_file_and_doctor_says_what_set_what(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("notes").mkdir()
    Path("notes/kim.txt").write_text("Kim grows tomatoes in Lisbon.", encoding="utf-8")
    Path("hipporag.toml").write_text('[store]\npath = "kb"\n[retrieval]\ntop_k = 1\n', encoding="utf-8")
    assert cli("index", "notes").exit_code == 0
    assert (tmp_path / "kb").is_dir() and not (tmp_path / ".hipporag").exists()

    doctor = cli("--json", "doctor", env={"HIPPORAG_RETRIEVAL__MODE": "dense"})
    settings = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "settings")
    assert settings["data"]["sources"] == {
        "retrieval.mode": "HIPPORAG_RETRIEVAL__MODE from the environment",
        "retrieval.top_k": "HIPPORAG_RETRIEVAL__TOP_K from hipporag.toml ([retrieval] top_k)",
        "store.path": "HIPPORAG_STORE_PATH from hipporag.toml ([store] path)",
    }
    human = cli("doctor").stdout
    assert "settings: set: retrieval.top_k = HIPPORAG_RETRIEVAL__TOP_K from hipporag.toml" in human

    other = tmp_path / "other.toml"
    other.write_text(f'[store]\npath = "{tmp_path / "elsewhere"}"\n', encoding="utf-8")
    missing = cli("--config", str(other), "list")
    assert missing.exit_code == 1 and f"no store at {tmp_path / 'elsewhere'}" in missing.stderr
    found = cli("--json", "query", "Who grows tomatoes?")
    assert len(json.loads(found.stdout)["passages"]) == 1  # top_k 1 from the file

    Path("hipporag.toml").write_text("[store]\nbackend = 'sqlite'\n", encoding="utf-8")
    wrong = cli("list")
    assert wrong.exit_code == 1
    assert "store.backend (HIPPORAG_STORE__BACKEND) from hipporag.toml ([store] backend)" in wrong.stderr
