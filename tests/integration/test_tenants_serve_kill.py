"""The ``serve`` process boundary: REST writes from several clients at once, the server killed with
SIGKILL in the middle of them, then restarted on the same store and sent the same writes again.

The kill lands at a gate of the test harness (tests/support/server_harness.py): while the writer thread
waits in an extraction (between store writes), or inside a step's store writes (after its passages,
before its synonym edges). After the kill the store passes SQLite's checks and holds whole passages
only: its passages, phrases, mentions, facts and fact links equal a store that indexed exactly the
passages that survived, uninterrupted. After the re-run every passage was either indexed or skipped as
already stored (never twice), and the store equals one that indexed everything without a kill.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.pipeline_support import dump_embedded, make_memory
from tests.support.reliability_support import assert_opens_cleanly, assert_same_store, dump_store
from tests.support.server_support import chain_corpus, harness, wait_for_file
from tests.support.tenant_serve import post_all

pytestmark = pytest.mark.integration

KEY = "k-tenant-a-5e6f7a8b9c0d"


def _reference(path: Path, table: dict[str, list[list[str]]], passages: list[dict[str, str]]) -> Path:
    with make_memory(path, table) as memory:
        if passages:
            memory.index(passages)
    return path


@pytest.mark.parametrize("gate", ["hold_extract", "hold_synonyms"])
def test_serve_killed_during_writes_leaves_whole_passages_and_resumes(tmp_path: Path, gate: str) -> None:
    passages, table = chain_corpus(40, variants_from=20)  # the later passages add synonym edges
    env = {"HIPPORAG_SERVER__API_KEYS": f'{{"{KEY}": ["default"]}}'}
    server = harness(tmp_path, table, env=env, **{gate: 4})
    entered = tmp_path / "gates" / ("extract-entered" if gate == "hold_extract" else "write-entered")
    try:
        with ThreadPoolExecutor(1) as pool:
            sent = pool.submit(post_all, server.url, KEY, passages)
            wait_for_file(entered)
            server.kill()  # SIGKILL: no shutdown code runs
            answers = sent.result()
    finally:
        server.kill()
    assert server.proc.returncode == -9
    assert None in answers  # some writes were cut off by the kill

    kb = tmp_path / "kb"
    assert_opens_cleanly(kb)
    after_kill = dump_embedded(kb)
    survived = [p for p in passages if p["id"] in {row[0] for row in after_kill["passages"]}]
    assert 0 < len(survived) < len(passages)  # the kill landed in the middle
    confirmed = {pid for a in answers if a for pid in a["indexed"]}
    assert confirmed <= {p["id"] for p in survived}  # every write the server confirmed is there
    whole = dump_embedded(_reference(tmp_path / "survived", table, survived))
    for part in ("passages", "phrases", "mentions", "facts", "states"):
        assert after_kill[part] == whole[part], f"{part}: half-written after the kill"

    server = harness(tmp_path, table, env=env)  # the same store, no gate
    try:
        again = post_all(server.url, KEY, passages)
    finally:
        assert server.terminate()
    assert all(a is not None and not a["failed"] for a in again)
    indexed = [pid for a in again if a for pid in a["indexed"]]
    skipped = [pid for a in again if a for pid in a["skipped"]]
    assert sorted(skipped) == sorted(p["id"] for p in survived)  # stored ones are skipped, never redone
    assert sorted(indexed + skipped) == sorted(p["id"] for p in passages)
    assert_same_store(dump_store(kb), dump_store(_reference(tmp_path / "all", table, passages)))
