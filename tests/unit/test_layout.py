"""The package's shape, read from its own imports, so that it cannot drift again.

* The root holds the API, settings, models and errors (and ``__init__``, ``__main__``); every other concern
  is a folder.
* Floors, top to bottom (:data:`FLOORS`): a module imports only modules of a lower floor, or of its own
  folder. Imports inside functions and under ``if TYPE_CHECKING`` count.
* No import cycle between modules.
* Retrieval modes: one module each, registered by name in ``models.RETRIEVAL_MODES``.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from pathlib import Path

import pytest

from hipporag_neo4j.models import RETRIEVAL_MODES

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[2] / "hipporag_neo4j"
NAME = "hipporag_neo4j"

#: Top to bottom. Each entry is a floor; a floor may hold several folders (or root modules) that do not
#: import each other. ``"__init__"`` and ``"__main__"`` are the package's own files.
FLOORS: list[tuple[str, ...]] = [
    ("__main__",),
    ("cli",),
    ("mcp_server",),
    ("server",),
    ("service", "integrations", "evaluation", "demo"),
    ("__init__",),
    ("api",),
    ("diagnostics",),
    ("indexing",),
    ("retrieval",),
    ("linking",),
    ("embedding",),
    ("extraction",),
    ("llm",),
    ("stores",),
    ("graph",),
    ("common",),
    ("settings",),
    ("models",),
    ("errors",),
]
ROOT_FILES = {"__init__.py", "__main__.py", "api.py", "settings.py", "models.py", "errors.py", "py.typed"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(name: str) -> str | None:
    """The package module ``name`` names (``a.b.C`` -> ``a.b`` when ``C`` is not a module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(path: Path, module: str) -> set[str]:
    """Every package module ``path`` imports, also inside functions and ``if TYPE_CHECKING``; relative
    imports resolved."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                full = ".".join([*base, *([node.module] if node.module else [])])
            else:
                full = node.module or ""
            if full == NAME or full.startswith(NAME + "."):
                for alias in node.names:
                    target = _resolve(f"{full}.{alias.name}")
                    if target:
                        found.add(target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(NAME):
                    target = _resolve(alias.name)
                    if target:
                        found.add(target)
    found.discard(module)
    return found


def _unit(module: str) -> str:
    """The folder (or root module) a module belongs to: ``hipporag_neo4j.stores.neo4j.store`` -> stores."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def _floor(unit: str) -> int:
    for level, units in enumerate(FLOORS):
        if unit in units:
            return level
    raise AssertionError(f"{unit} is on no floor: add it to FLOORS in tests/unit/test_layout.py")


def graph() -> dict[str, set[str]]:
    return {module: imports_of(path, module) for module, path in MODULES.items()}


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            a, b = _unit(module), _unit(target)
            if a != b and _floor(b) <= _floor(a):
                found.append(f"{module} ({a}, floor {_floor(a)}) imports {target} ({b}, floor {_floor(b)})")
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_root_holds_only_the_api_settings_models_and_errors() -> None:
    files = {p.name for p in PACKAGE.iterdir() if p.is_file()}
    assert files <= ROOT_FILES, f"loose modules in the package root: {sorted(files - ROOT_FILES)}"


def test_every_folder_is_on_a_floor() -> None:
    for module in MODULES:
        _floor(_unit(module))


def test_no_import_runs_up_a_floor() -> None:
    assert upward_imports(graph()) == []


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_the_two_stores_never_import_each_other() -> None:
    """Both stores sit on the in-process engine (``stores.memory``); neither depends on its sibling."""
    pairs = [("stores.neo4j", "stores.embedded"), ("stores.embedded", "stores.neo4j")]
    offenders = [
        (module, target)
        for module, targets in graph().items()
        for mine, theirs in pairs
        if module.startswith(f"{NAME}.{mine}")
        for target in targets
        if target.startswith(f"{NAME}.{theirs}")
    ]
    assert offenders == [], f"one store imports the other: {offenders}"


def test_no_module_imports_the_cli() -> None:
    offenders = [
        module
        for module, targets in graph().items()
        if _unit(module) not in ("cli", "__main__") and any(_unit(t) == "cli" for t in targets)
    ]
    assert offenders == [], f"these modules import the CLI: {offenders}"


def test_the_checks_see_what_they_should(tmp_path: Path) -> None:
    """The reader sees imports under TYPE_CHECKING and inside functions, and relative ones; the checks
    flag an upward import and a cycle."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "if TYPE_CHECKING:\n    from hipporag_neo4j.cli.main import Context\n"
        "def f():\n    from hipporag_neo4j.graph import ppr\n"
    )
    assert imports_of(sample, "hipporag_neo4j.stores.sample") == {
        "hipporag_neo4j.cli.main",
        "hipporag_neo4j.graph.ppr",
    }
    relative = PACKAGE / "retrieval" / "modes" / "dense.py"
    assert "hipporag_neo4j.retrieval.retriever" in imports_of(
        relative, "hipporag_neo4j.retrieval.modes.dense"
    )
    assert upward_imports({"hipporag_neo4j.stores.base": {"hipporag_neo4j.api"}}) != []
    assert upward_imports({"hipporag_neo4j.api": {"hipporag_neo4j.stores.base"}}) == []
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


# --- retrieval modes as files --------------------------------------------------------------------


def test_every_registered_mode_is_a_module_and_every_module_is_registered() -> None:
    from hipporag_neo4j.retrieval.retriever import Mode, get_mode

    folder = PACKAGE / "retrieval" / "modes"
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    assert modules == set(RETRIEVAL_MODES)
    for name in RETRIEVAL_MODES:
        assert isinstance(get_mode(name), Mode)


def test_the_cli_rest_mcp_and_settings_read_the_modes_from_the_registry() -> None:
    from hipporag_neo4j.cli.main import MODES
    from hipporag_neo4j.server.schemas import QueryRequest
    from hipporag_neo4j.settings import RetrievalSettings

    assert list(RETRIEVAL_MODES) == MODES
    schema = QueryRequest.model_json_schema()
    enums = [option.get("enum") for option in schema["properties"]["mode"].get("anyOf", [])]
    assert list(RETRIEVAL_MODES) in enums
    for name in RETRIEVAL_MODES:
        assert RetrievalSettings(mode=name).mode == name
    with pytest.raises(ValueError, match="unknown retrieval mode 'nope'"):
        RetrievalSettings(mode="nope")


def test_a_new_mode_is_a_module_and_one_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mode registered by name is validated by the settings and answers through the retriever,
    with nothing else edited."""
    from hipporag_neo4j.retrieval import retriever as retriever_module
    from hipporag_neo4j.retrieval.retriever import Mode, Query, Retriever, get_mode
    from hipporag_neo4j.settings import RetrievalSettings

    class Nothing(Mode):
        def retrieve(self, retriever: Retriever, q: Query) -> object:  # type: ignore[override]
            return ("nothing", q.text, q.top_k)

    module = types.ModuleType("hipporag_neo4j.retrieval.modes.nothing")
    module.MODE = Nothing()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(RETRIEVAL_MODES, "nothing", "returns nothing (a test)")
    get_mode.cache_clear()
    try:
        assert RetrievalSettings(mode="nothing").mode == "nothing"
        view = types.SimpleNamespace(passage_count=lambda: 3)
        store = types.SimpleNamespace(view=lambda: view)
        settings = RetrievalSettings(mode="nothing", top_k=2)
        r = retriever_module.Retriever(store, embedder=None, settings=settings, query_ner=None)  # type: ignore[arg-type]
        assert r.retrieve("q") == ("nothing", "q", 2)
        assert importlib.import_module("hipporag_neo4j.retrieval.modes.nothing") is module
    finally:
        get_mode.cache_clear()
