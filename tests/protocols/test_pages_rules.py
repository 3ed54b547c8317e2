"""Each protocol's pieces of the shared item page: the templates its spec names exist and hold its controls."""
from __future__ import annotations

import pytest
from django.template import TemplateDoesNotExist
from django.template.loader import get_template

from protocols.registry import protocol_named, registered
from tests.factories import make_study

TEMPLATE_KEYS = ("card_controls_template", "answer_extra_template", "keys_template", "document_actions_template")


@pytest.mark.parametrize("name", [spec.name for spec in registered()])
def test_every_template_a_spec_names_exists(name: str) -> None:
    parts = protocol_named(name).page_parts(3)
    for key in TEMPLATE_KEYS:
        if parts[key]:
            try:
                get_template(parts[key])
            except TemplateDoesNotExist:  # pragma: no cover - the assertion names it
                pytest.fail(f"{name}: {key} names {parts[key]!r}, which does not exist")


@pytest.mark.parametrize("name", [spec.name for spec in registered()])
def test_every_protocol_has_keyboard_lines(name: str) -> None:
    assert protocol_named(name).keys_template, f"{name} has no lines in the keyboard legend"


def test_only_two_candidates_of_a_side_by_side_protocol_share_a_row() -> None:
    assert protocol_named("choice").cards_class(2) == "two-up"
    assert protocol_named("choice").cards_class(3) == ""
    # A ranking's cards stay stacked; more than five rank toggles wrap under the title.
    assert protocol_named("ranking").cards_class(2) == ""
    assert protocol_named("ranking").cards_class(6) == "many-ranks"


def test_only_the_ranking_item_carries_the_two_digit_hint() -> None:
    assert set(protocol_named("ranking").item_data()) == {"pending-hint"}
    assert all(protocol_named(spec.name).item_data() == {} for spec in registered() if spec.name != "ranking")


@pytest.mark.django_db
def test_the_study_page_lists_a_protocols_own_settings() -> None:
    ranking = make_study(protocol="ranking", settings={"allow_ties": True})
    assert ("Ties", "allowed") in ranking.spec.setting_rows(ranking)
    choice = make_study(slug="c", protocol="choice")
    choice.protocol_settings = {"some_flag": True, "shown_order": ["a", "b"]}
    assert choice.spec.setting_rows(choice) == [("Shown order", "a, b"), ("Some flag", "yes")]
