"""The Neo4j driver as the store opens it: quiet about what is expected, loud about deprecations in tests.

The server sends notifications with results. Ours are expected in two kinds, both UNRECOGNIZED:
"property key does not exist" (``reembed_state``, ``metadata_json`` and the like are only written when
they have a value, and a store that never had one has no such key yet) and "null value eliminated in
set function" (aggregations over OPTIONAL MATCH rows). The driver would log each one at WARNING on
every query, so the store asks the server not to send that classification at all
(``notifications_disabled_classifications``, driver 5.22+ and server 5.7+; the older
``notifications_disabled_categories`` otherwise).

Everything else still arrives, and the driver logs it (``neo4j.notifications``). With the setting
``neo4j.warn_notifications`` (on in the test suite's settings) the driver also raises WARNING
notifications as Python warnings (``warn_notification_severity=WARNING``): a deprecation becomes
``neo4j.warnings.Neo4jDeprecationWarning``, which the test suite turns into an error (pyproject
``filterwarnings``), so a deprecated statement fails the tests until it is fixed. It is off for users:
to place those warnings the driver captures ``inspect.stack()`` for every statement and keeps it with
the statement's result until the transaction ends, so a read of many batches from frames of their own
(the copy's vector reads) held every batch's rows at once: 16.9 GB at 1.2M vectors, killed.

When the server goes away (stopped, killed, restarting): :func:`is_unavailable` tells such an error from
the others, the runner (``writer.CypherRunner``) retries it with bounded backoff like any transient
error (a transaction that failed before its commit never happened, so running it again is safe; a
connection lost *during* a commit, ``IncompleteCommit``, is not retried), and :func:`failure` turns what
is left into :class:`~hipporag_neo4j.errors.StoreUnavailableError` naming the server. The runner counts
these outages; the store then re-checks what it holds in memory that the server may have lost
(``Neo4jStore.capabilities``: GDS projections, the server's plugins, the database's identity).
"""

from __future__ import annotations

import inspect
import logging
import re
from typing import Any

import neo4j
from neo4j.exceptions import IncompleteCommit, Neo4jError, ServiceUnavailable, SessionExpired

from hipporag_neo4j.errors import StoreError, StoreUnavailableError


def driver_options(warn_notifications: bool = False) -> dict[str, Any]:
    """Notification options for :func:`neo4j.GraphDatabase.driver` that the installed driver takes;
    ``warn_notifications``: WARNING notifications raised as Python warnings too (``neo4j.warn_notifications``:
    the driver then captures the call stack of every statement it runs)."""
    accepted = inspect.signature(neo4j.GraphDatabase.driver).parameters
    options: dict[str, Any] = {}
    classification = getattr(neo4j, "NotificationDisabledClassification", None)
    if classification is not None:
        options["notifications_disabled_classifications"] = [classification.UNRECOGNIZED]
    else:  # driver 5.7 to 5.21
        options["notifications_disabled_categories"] = [neo4j.NotificationDisabledCategory.UNRECOGNIZED]
    if warn_notifications and hasattr(neo4j, "NotificationMinimumSeverity"):
        options["warn_notification_severity"] = neo4j.NotificationMinimumSeverity.WARNING
    has_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    return {k: v for k, v in options.items() if has_kwargs or k in accepted}


def open_driver(uri: str, auth: tuple[str, str], *, warn_notifications: bool = False) -> neo4j.Driver:
    """A driver for ``uri`` with :func:`driver_options` (and :func:`quiet_driver_logs`)."""
    quiet_driver_logs()
    return neo4j.GraphDatabase.driver(uri, auth=auth, **driver_options(warn_notifications))


# --- when the server goes away ------------------------------------------------------------------------
#: Status codes of a database that exists but does not serve right now (starting, stopping, restarting).
UNAVAILABLE_CODES = frozenset({"Neo.TransientError.General.DatabaseUnavailable"})
#: The neo4j driver's loggers: a lost connection is logged there at ERROR (see :func:`quiet_driver_logs`).
DRIVER_LOGGER = "neo4j"


def is_unavailable(exc: BaseException) -> bool:
    """The server is not reachable or not serving: a refused or lost connection, an expired session, a
    database starting or stopping (not: a bad statement, a constraint, a deadlock)."""
    if isinstance(exc, ServiceUnavailable | SessionExpired):
        return True
    return isinstance(exc, Neo4jError) and exc.code in UNAVAILABLE_CODES


def _reason(exc: BaseException) -> str:
    """The short cause of a connection failure ("[Errno 111] Connection refused"), else its first line."""
    text = str(exc).strip()
    found = re.search(r"\(reason (.+)\)\s*$", text)
    if found:
        return found.group(1)
    first = text.splitlines()[0].rstrip(":") if text else type(exc).__name__
    return first


def failure(exc: BaseException, where: str, *, server: str | None, retries: int, waited: float) -> StoreError:
    """The project's error for a transaction that failed for good (not retryable, or retried enough).

    A server that cannot be reached gives :class:`StoreUnavailableError` naming it and saying what to do;
    anything else a :class:`StoreError` naming the statement."""
    tried = ""
    if retries:
        tried = f" after {retries} {'retry' if retries == 1 else 'retries'} over {waited:.1f} s"
    if not is_unavailable(exc):
        return StoreError(f"{where} failed{tried}: {exc}")
    name = f"Neo4j at {server}" if server else "the Neo4j server"
    if isinstance(exc, IncompleteCommit):
        what = (
            f"the connection was lost while {where} was committing, so whether it was stored is unknown "
            "(running the same command again settles it: the store's writes are idempotent)"
        )
    else:
        what = f"{where} failed{tried} ({_reason(exc)})"
    return StoreUnavailableError(
        f"{name} is unavailable (stopped, restarting or unreachable): {what}. What was committed is kept; "
        "try again once the server is back (an interrupted index run resumes where it stopped)"
    )


def quiet_driver_logs() -> None:
    """Give the driver's loggers a do-nothing handler, so that a lost connection is not printed by Python's
    last-resort handler (``[#E696] _: <CONNECTION> error: Failed to read from defunct connection ...``)
    when the application configured no logging: the store raises :class:`StoreUnavailableError` saying so.
    With logging configured (``serve``, ``--verbose``) the records still reach its handlers."""
    logger = logging.getLogger(DRIVER_LOGGER)
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
