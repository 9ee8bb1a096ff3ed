"""The Neo4j driver as the store opens it: quiet about what is expected, loud about deprecations.

The server sends notifications with results. Ours are expected in two kinds, both UNRECOGNIZED:
"property key does not exist" (``reembed_state``, ``metadata_json`` and the like are only written when
they have a value, and a store that never had one has no such key yet) and "null value eliminated in
set function" (aggregations over OPTIONAL MATCH rows). The driver would log each one at WARNING on
every query, so the store asks the server not to send that classification at all
(``notifications_disabled_classifications``, driver 5.22+ and server 5.7+; the older
``notifications_disabled_categories`` otherwise).

Everything else still arrives. With ``warn_notification_severity=WARNING`` the driver also raises
WARNING notifications as Python warnings: a deprecation becomes ``neo4j.warnings.
Neo4jDeprecationWarning``, a ``DeprecationWarning`` that Python hides from users by default and that
the test suite turns into an error (pyproject ``filterwarnings``), so a deprecated statement fails the
tests until it is fixed.
"""

from __future__ import annotations

import inspect
from typing import Any

import neo4j


def driver_options() -> dict[str, Any]:
    """Notification options for :func:`neo4j.GraphDatabase.driver` that the installed driver takes."""
    accepted = inspect.signature(neo4j.GraphDatabase.driver).parameters
    options: dict[str, Any] = {}
    classification = getattr(neo4j, "NotificationDisabledClassification", None)
    if classification is not None:
        options["notifications_disabled_classifications"] = [classification.UNRECOGNIZED]
    else:  # driver 5.7 to 5.21
        options["notifications_disabled_categories"] = [neo4j.NotificationDisabledCategory.UNRECOGNIZED]
    if hasattr(neo4j, "NotificationMinimumSeverity"):
        options["warn_notification_severity"] = neo4j.NotificationMinimumSeverity.WARNING
    has_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    return {k: v for k, v in options.items() if has_kwargs or k in accepted}


def open_driver(uri: str, auth: tuple[str, str]) -> neo4j.Driver:
    """A driver for ``uri`` with :func:`driver_options`."""
    return neo4j.GraphDatabase.driver(uri, auth=auth, **driver_options())
