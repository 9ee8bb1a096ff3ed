"""Issue 37: the offline extractor on a support ticket (loads the real spaCy model)."""

from __future__ import annotations

import pytest

from hipporag_neo4j.common.text import normalize_phrase
from hipporag_neo4j.extraction.spacy_extractor import SpacyExtractor, SpacyFeatures
from hipporag_neo4j.models import Extraction, Passage

pytestmark = pytest.mark.integration

TITLE = "Ticket FH-1927"
TEXT = (
    "Date: 2023-03-15\n"
    "Status: Closed\n"
    "Priority: P3\n"
    "Channel: Email\n"
    "Customer: Pinecrest Greenhouses\n"
    "Site: Glasshouse Row 3\n"
    "Agent: Omar Haddad\n"
    "Product: Osprey O4\n"
    "Serial: OO4-13077\n"
    "Problem: New installation requested at the Glasshouse Row 3.\n"
    "Resolution: Installed a Osprey O4 pump, serial OO4-13077, at the Glasshouse Row 3 for Pinecrest "
    "Greenhouses; commissioning test passed at 5.7 bar."
)
LABELS = set(
    [
        "date",
        "status",
        "priority",
        "channel",
        "customer",
        "site",
        "agent",
        "product",
        "serial",
        "problem",
        "resolution",
    ]
)


def _extract(features: SpacyFeatures | None = None) -> Extraction:
    (result,) = SpacyExtractor(features=features).extract([Passage(id="t", text=TEXT, title=TITLE)])
    assert isinstance(result, Extraction)
    return result


def _nodes(extraction: Extraction) -> set[str]:
    names = {normalize_phrase(e) for e in extraction.entities}
    for t in extraction.triples:
        names |= {normalize_phrase(t.subject), normalize_phrase(t.object)}
    return names


def test_field_labels_are_no_nodes_and_lines_do_not_run_together() -> None:
    nodes = _nodes(_extract())
    assert not nodes & LABELS
    assert not any(word in LABELS for name in nodes for word in name.split() if name != "ticket fh 1927")
    assert {"pinecrest greenhouses", "omar haddad", "osprey o4"} <= nodes


def test_short_fields_are_facts_of_the_title_and_the_note_has_the_title_as_subject() -> None:
    triples = {t.as_tuple() for t in _extract().triples}
    assert ("ticket fh 1927", "customer", "pinecrest greenhouses") in triples
    assert ("ticket fh 1927", "product", "osprey o4") in triples
    assert ("ticket fh 1927", "installed", "osprey o4 pump") in triples
    # sentences are never fields' facts: the problem and resolution are parsed, not stored whole
    assert not any(p in {"problem", "resolution"} for _, p, _ in triples)


def test_switched_off_the_ticket_is_parsed_as_prose_as_before() -> None:
    nodes = _nodes(_extract(SpacyFeatures(form_fields=False)))
    assert any(word in LABELS for name in nodes for word in name.split())  # the flood the issue shows
