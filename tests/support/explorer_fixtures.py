"""Shared test helpers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hipporag_neo4j.settings import load_settings
from tests.support.server_support import ServerProcess

KEY = "explorer-test-key"


XSS_ID = "xss-note"


XSS_TITLE = "<img src=x onerror=\"window.__pwned='title'\">Evil title"


XSS_TEXT = (
    "<script>window.__pwned='text'</script><img src=x onerror=\"window.__pwned='img'\"> "
    "Hestia Quorn is a librarian in Hawby."
)


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hipporag_neo4j.api import HippoRAG
    from hipporag_neo4j.demo.link import LABEL
    from hipporag_neo4j.demo.run import demo_file

    path = tmp_path_factory.mktemp("explorer") / "kb"
    settings = load_settings({"store": {"path": str(path)}})
    with HippoRAG(settings) as memory:
        memory.index_openie(demo_file("openie_demo.json"))
        memory.import_graph(demo_file("enterprise_graph.jsonl"))
        memory.link(LABEL, "name")
        report = memory.index([{"id": XSS_ID, "title": XSS_TITLE, "text": XSS_TEXT}])
        assert report.indexed == [XSS_ID], report
    return path


@pytest.fixture(scope="module", params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def server(
    request: pytest.FixtureRequest, demo_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """The real ``serve`` over the demo: on the embedded store, and on Neo4j (the demo indexed into a
    fresh namespace) when a server is configured (HIPPORAG_TEST_NEO4J_URI)."""
    cwd = tmp_path_factory.mktemp("serve")
    env = {"HIPPORAG_SERVER__API_KEY": KEY}
    if request.param == "embedded":
        args = ["-m", "hipporag_neo4j", "--store", str(demo_store), "serve", "--port", "{port}"]
    else:
        from hipporag_neo4j.api import HippoRAG
        from hipporag_neo4j.demo.run import demo_file
        from tests.support.neo4j_support import neo4j_settings_or_skip

        n4j = neo4j_settings_or_skip()
        password = n4j.password.get_secret_value()
        values = {"uri": n4j.uri, "user": n4j.user, "password": password, "database": n4j.database}
        with HippoRAG(load_settings({"neo4j": {**values, "namespace": n4j.namespace}})) as memory:
            memory.index_openie(demo_file("openie_demo.json"))
            memory.index([{"id": XSS_ID, "title": XSS_TITLE, "text": XSS_TEXT}])
        env |= {
            "HIPPORAG_NEO4J_URI": str(n4j.uri),
            "HIPPORAG_NEO4J_USER": n4j.user,
            "HIPPORAG_NEO4J_PASSWORD": password,
            "HIPPORAG_NEO4J_DATABASE": n4j.database,
        }
        args = ["-m", "hipporag_neo4j", "--namespace", n4j.namespace, "serve", "--port", "{port}"]
    proc = ServerProcess(args, env=env, cwd=cwd)
    proc.backend = request.param  # type: ignore[attr-defined]
    try:
        proc.wait_until_up("/ready")
        yield proc
    finally:
        proc.terminate()
        if request.param == "neo4j":  # module-scoped: the per-test clean-up never sees this namespace
            from tests.support import neo4j_support

            server_found = neo4j_support.server_found()
            if server_found is not None:
                neo4j_support.delete_namespaces(server_found, [n4j.namespace])


def write_caption_files(folder: Path, tickets: int = 12) -> Path:
    """Files as a user has them: a Markdown page with a title, one ticket as a title-less .txt, and an
    archive of tickets (from tests/data/tickets) long enough to be chunked (``archive-2023.txt#n``)."""
    import json

    corpus = json.loads(
        (Path(__file__).resolve().parents[1] / "data" / "tickets" / "corpus.json").read_text()
    )
    (folder / "wiki").mkdir(parents=True)
    (folder / "tickets").mkdir()
    (folder / "wiki" / "release.md").write_text(
        "# Release notes\n\nThe Swift S1 pump firmware 2.1 fixes the start-up rattle.\n", encoding="utf-8"
    )
    (folder / "tickets" / "FH-2000.txt").write_text(corpus[100]["text"], encoding="utf-8")
    archive = "\n\n".join(f"{t['title']}\n{t['text']}" for t in corpus[:tickets])
    (folder / "tickets" / "archive-2023.txt").write_text(archive, encoding="utf-8")
    return folder


#: the settings that index :func:`write_caption_files` offline, the archive in several chunks
CAPTION_SETTINGS = {"extraction": {"method": "spacy", "max_passage_tokens": 96}}
