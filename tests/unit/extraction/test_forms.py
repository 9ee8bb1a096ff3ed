"""Issue 37: form-like text (two or more ``Label: value`` lines) is split into its fields' values."""

from __future__ import annotations

import pytest

from hipporag_neo4j.extraction.forms import field_lines, form_segments, short_fields

pytestmark = pytest.mark.unit

TICKET = (
    "Date: 2024-03-01\n"
    "Status: Closed\n"
    "Customer: Maple Ridge Orchards\n"
    "Agent: Dana Whitfield\n"
    "Problem: Customer reports a steady leak at the drive end of the pump.\n"
    "Resolution: Fitted seal kit SK-2210; the leak stopped."
)


def test_a_ticket_is_parsed_as_its_values_without_the_labels() -> None:
    assert form_segments(TICKET) == [
        "2024-03-01",
        "Closed",
        "Maple Ridge Orchards",
        "Dana Whitfield",
        "Customer reports a steady leak at the drive end of the pump.",
        "Fitted seal kit SK-2210; the leak stopped.",
    ]


def test_other_lines_of_a_form_stay_together_as_one_segment() -> None:
    text = (
        "Ticket notes\nCustomer: Bluewater Dairy\nSite: Harlow Creek plant\nThe pump was replaced\nin May.\n"
    )
    assert form_segments(text) == [
        "Ticket notes",
        "Bluewater Dairy",
        "Harlow Creek plant",
        "The pump was replaced\nin May.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "In My Time: A Personal and Political Memoir is a memoir written by Dick Cheney.",  # one line
        "The Nissan Leaf (Japanese: 日産リーフ) is a car. Victoria Falls (Tonga: Mosi) is a waterfall.",
        "Note: the pump was replaced.\nIt runs again.",  # one field line is not a form
        "the label: must start with a capital\nanother: lower-case label",
    ],
)
def test_prose_is_not_a_form(text: str) -> None:
    assert form_segments(text) is None


def test_short_fields_are_names_codes_and_dates_not_sentences() -> None:
    assert field_lines(TICKET)[0] == ("Date", "2024-03-01")
    assert short_fields(TICKET) == [
        ("Date", "2024-03-01"),
        ("Status", "Closed"),
        ("Customer", "Maple Ridge Orchards"),
        ("Agent", "Dana Whitfield"),
    ]
