"""The benchmark scale suite's smoke size (XS) on the embedded store, through ``index_openie``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.scale_suite import check_smoke, run_smoke

pytestmark = pytest.mark.slow


def test_scale_suite_xs_embedded(tmp_path: Path) -> None:
    data = run_smoke(tmp_path, "--store", "embedded")
    check_smoke(data, ["embedded"])
