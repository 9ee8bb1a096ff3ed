"""The store's driver options (no server): expected notifications off, deprecations raised as warnings."""

from __future__ import annotations

import neo4j
import pytest

from hipporag_neo4j.stores.neo4j.driver import driver_options, open_driver

pytestmark = pytest.mark.unit


def test_the_options_turn_off_unrecognized_and_warn_on_warnings_when_asked() -> None:
    options = driver_options()
    disabled = options.get("notifications_disabled_classifications") or options.get(
        "notifications_disabled_categories"
    )
    assert [str(getattr(c, "value", c)) for c in disabled] == ["UNRECOGNIZED"]
    # off by default: the driver would capture the call stack of every statement (see driver.py)
    assert "warn_notification_severity" not in options
    warned = driver_options(warn_notifications=True)
    assert warned["warn_notification_severity"] == neo4j.NotificationMinimumSeverity.WARNING


def test_a_result_made_without_the_warning_option_keeps_no_stack() -> None:
    """What the default saves: the installed driver's Result captures ``inspect.stack()`` (every frame of
    the caller, and so every local of them) only when warnings are asked for."""
    from neo4j._sync.work.result import Result

    class Connection:
        unresolved_address = ("127.0.0.1", 7687)

        def new_hydration_scope(self) -> object:
            return object()

    def result(severity: object) -> Result:
        return Result(Connection(), 1000, severity, None, None, None)  # type: ignore[arg-type]

    assert result(driver_options().get("warn_notification_severity"))._creation_stack is None
    warned = driver_options(warn_notifications=True)["warn_notification_severity"]
    assert result(warned)._creation_stack


def test_the_installed_driver_takes_them() -> None:
    driver = open_driver("bolt://127.0.0.1:1", ("neo4j", "x"))  # no I/O until used
    try:
        assert driver is not None
    finally:
        driver.close()


def test_the_test_suite_turns_a_deprecation_into_an_error() -> None:
    """pyproject's filterwarnings: what the driver raises for a DEPRECATION notification fails a test."""
    import warnings

    from neo4j.warnings import Neo4jDeprecationWarning

    with pytest.raises(Neo4jDeprecationWarning):
        # built without __init__, which wants a server notification (the live test raises a real one)
        warnings.warn(Neo4jDeprecationWarning.__new__(Neo4jDeprecationWarning), stacklevel=1)
