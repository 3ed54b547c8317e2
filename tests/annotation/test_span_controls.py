"""Quality control for MQM and ESA: control items with a generated error, the overlap rule, the score drop."""
from __future__ import annotations

import json
import math
import random
import re
from io import StringIO
from typing import Any, Callable

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Annotator, Assignment
from annotation.quality.checks import annotator_quality, spam_check_failed
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.quality.span_controls import (ControlError, score_drop_p, span_check_passed, span_control_summary,
                                      study_span_controls)
from studies.controls import error_injection as ei
from studies.models import Candidate, Item
from studies.controls.spam import CONTROL_ERROR_KEY
from tests.conftest import annotator_client
from tests.factories import owned_import, persona

TEXTS = [
    "The minister said that he is not ready, but the council voted anyway.",
    "She bought the red house because the garden was large.",
    "However, the company has lost money and its workers are worried.",
    "The doctor told him that his results were good.",
    "They never answered the letter, so the lawyer called again.",
    "The river flooded the village although the dam was new.",
]


def span_study_file(slug: str, protocol: str = "mqm", seed: int = 7, **settings: Any) -> dict[str, Any]:
    items = [{"id": f"it-{i}", "source": f"Quelle {i}.",
              "candidates": [{"system": "ref", "text": text, "is_reference": True},
                             {"system": "sysA", "text": TEXTS[(i + 1) % len(TEXTS)]}]}
             for i, text in enumerate(TEXTS)]
    base = {"redundancy": 1, "spam_rate": 0.5, "seed": seed, "unit": "sentence", "instructions": "Mark errors.",
            "target_language": "en", **settings}
    return {"slug": slug, "title": f"Study {slug}", "protocol": protocol, "settings": base, "items": items}


def controls_of(study) -> list[Item]:
    return list(study.items.filter(is_spam=True).order_by("spam_of__external_id"))


def degraded(item: Item) -> Candidate:
    return item.candidates.get(is_spam=True)


# --- generation ------------------------------------------------------------------------

@pytest.mark.django_db
def test_generation_is_seeded_and_deterministic():
    first = owned_import(status="open", data=span_study_file("one"))
    second = owned_import(status="open", data=span_study_file("two"))
    other_seed = owned_import(status="open", data=span_study_file("three", seed=8))

    def fingerprint(study):
        return [(c.spam_of.external_id, degraded(c).system, degraded(c).text, c.metadata[CONTROL_ERROR_KEY])
                for c in controls_of(study)]

    assert len(fingerprint(first)) == 3  # half of six items
    assert fingerprint(first) == fingerprint(second)
    assert fingerprint(first) != fingerprint(other_seed)


@pytest.mark.django_db
def test_each_control_changes_one_candidate_exactly_where_its_record_says():
    study = owned_import(status="open", data=span_study_file("where", spam_rate=0.5))
    for control in controls_of(study):
        bad = degraded(control)
        original = control.spam_of.candidates.get(system=bad.system)
        record = control.metadata[CONTROL_ERROR_KEY]
        assert record["kind"] in ei.KINDS
        assert bad.text != original.text
        assert record["before"] in original.text and record["after"] in bad.text
        assert 0 <= record["start"] < record["end"] <= len(bad.text)
        # Only the edit differs, and the recorded span covers every changed character.
        prefix = common_prefix(bad.text, original.text)
        suffix = common_prefix(bad.text[prefix:][::-1], original.text[prefix:][::-1])
        assert record["start"] <= prefix and len(bad.text) - suffix <= record["end"]
        assert original.text[prefix:len(original.text) - suffix] in record["before"]
        others = {c.system: c.text for c in control.candidates.filter(is_spam=False)}
        assert others == {c.system: c.text for c in control.spam_of.candidates.exclude(system=bad.system)}


def common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def one(text: str, language: str, kind: str, vocabulary: list[str] | None = None, seed: int = 0) -> ei.InjectedError:
    error = ei.inject_error(text, language, vocabulary or [], random.Random(seed), kinds=(kind,))
    assert error is not None, (text, kind)
    return error


def marked(error: ei.InjectedError) -> str:
    return error.text[error.start:error.end]


@pytest.mark.parametrize("text, language, kind, degraded_text, span", [
    ("He is not ready.", "en", ei.NEGATION_DROPPED, "He is ready.", "is ready"),
    ("She doesn't care.", "en", ei.NEGATION_DROPPED, "She does care.", "does care"),
    ("They never came.", "en", ei.NEGATION_DROPPED, "They always came.", "always"),
    ("Er ist nicht froh.", "de", ei.NEGATION_DROPPED, "Er ist froh.", "ist froh"),
    ("Sie hat keine Zeit.", "de", ei.NEGATION_DROPPED, "Sie hat eine Zeit.", "eine"),
    ("Il n'est pas content.", "fr", ei.NEGATION_DROPPED, "Il est content.", "est content"),
    ("The car was red.", "en", ei.NEGATION_ADDED, "The car was not red.", "not"),
    ("Das Auto ist rot.", "de", ei.NEGATION_ADDED, "Das Auto ist nicht rot.", "nicht"),
    ("La voiture est rouge.", "fr", ei.NEGATION_ADDED, "La voiture n'est pas rouge.", "n'est pas"),
    ("C'est rouge.", "fr", ei.NEGATION_ADDED, "Ce n'est pas rouge.", "Ce n'est pas"),
    ("Yesterday he left.", "en", ei.PRONOUN_GENDER, "Yesterday she left.", "she"),
    ("I saw her car.", "en", ei.PRONOUN_GENDER, "I saw his car.", "his"),
    ("I saw her.", "en", ei.PRONOUN_GENDER, "I saw him.", "him"),
    ("Gestern kam er.", "de", ei.PRONOUN_GENDER, "Gestern kam sie.", "sie"),
    ("Hier elle dort.", "fr", ei.PRONOUN_GENDER, "Hier il dort.", "il"),
    ("It rained, but we walked.", "en", ei.CONNECTIVE, "It rained, so we walked.", "so"),
    ("We stayed because it rained.", "en", ei.CONNECTIVE, "We stayed although it rained.", "although"),
    ("However, we left.", "en", ei.CONNECTIVE, "Therefore, we left.", "Therefore"),
    ("Wir blieben, weil es regnete.", "de", ei.CONNECTIVE, "Wir blieben, obwohl es regnete.", "obwohl"),
    ("Il pleut, mais nous sortons.", "fr", ei.CONNECTIVE, "Il pleut, donc nous sortons.", "donc"),
    ("Il reste parce que tu pars.", "fr", ei.CONNECTIVE, "Il reste bien que tu pars.", "bien que"),
])
def test_each_kind_of_change_on_hand_examples(text, language, kind, degraded_text, span):
    error = one(text, language, kind)
    assert error.kind == kind
    assert error.text == degraded_text
    assert marked(error) == span


def test_content_word_is_replaced_by_another_content_word_of_the_vocabulary():
    vocabulary = ei.content_vocabulary(["The bridge collapsed.", "A farmer sells apples."], "en")
    assert vocabulary == ["apples", "bridge", "collapsed", "farmer", "sells"]  # function words left out
    for seed in range(10):
        error = one("The bridge collapsed.", "en", ei.CONTENT_WORD, vocabulary, seed)
        assert error.before in ("bridge", "collapsed")
        assert marked(error) == error.after and error.after in vocabulary and error.after != error.before
        assert error.text == "The bridge collapsed.".replace(error.before, error.after)


def test_languages_without_lists_fall_back_to_a_content_word():
    vocabulary = ["ciudad", "perro"]
    for seed in range(5):
        error = ei.inject_error("Él no vio el perro.", "es", vocabulary, random.Random(seed))
        assert error is not None and error.kind == ei.CONTENT_WORD
    assert ei.inject_error("He is not ready.", "en", [], random.Random(0), kinds=(ei.PRONOUN_GENDER,)).text == \
        "She is not ready."
    assert ei.inject_error("a b", "en", [], random.Random(0)) is None  # nothing to change: no control from it


def test_edits_never_cross_a_line_break_and_highlights_move_with_the_text():
    text = "It is late.\nNot everyone came."
    for seed in range(20):
        error = ei.inject_error(text, "en", ["cold"], random.Random(seed))
        assert error is not None
        assert error.text.count("\n") == 1
    edit = ei.Edit(ei.NEGATION_ADDED, 3, 5, "is not", 6, 9)
    assert ei.shift_spans([[0, 2], [6, 10], [3, 5]], edit) == [[0, 2], [10, 14], [3, 9]]


# --- the pass rule -----------------------------------------------------------------------

ERROR = ControlError(start=10, end=15, kind=ei.PRONOUN_GENDER)


def answer(candidate_pk: int, *spans: dict[str, Any], score: int | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"spans": list(spans)}
    if score is not None:
        entry["score"] = score
    return {"annotations": {str(candidate_pk): entry}}


def span(start: int, end: int, severity: str = "major", side: str = "target") -> dict[str, Any]:
    return {"start": start, "end": end, "side": side, "severity": severity, "category": "Accuracy/Mistranslation"}


@pytest.mark.parametrize("spans, passed", [
    ([span(12, 14)], True),                       # inside
    ([span(0, 11)], True),                        # overlaps its first character
    ([span(14, 30, "critical")], True),           # critical counts as major
    ([span(2, 4, "minor"), span(11, 13)], True),  # one major overlap is enough
    ([span(10, 15, "minor")], False),             # right place, too mild
    ([span(0, 10)], False),                       # ends where the error starts: no overlap
    ([span(15, 20)], False),                      # starts where it ends
    ([span(10, 15, side="source")], False),       # a source span is not the candidate's error
    ([], False),                                  # "no error"
])
def test_major_overlap_passes_minor_or_no_overlap_misses(spans, passed):
    assert span_check_passed(answer=answer(7, *spans), candidate_pk=7, error=ERROR) is passed
    assert span_check_passed(answer=answer(8, *spans), candidate_pk=7, error=ERROR) is False  # other candidate


def test_mann_whitney_on_hand_scores():
    # Originals 70, 80, 90 all above copies 10, 20, 30: U = 9 of 9, exact p = 1 / C(6, 3) = 0.05.
    assert score_drop_p([(90, 20), (80, 10), (70, 30)]) == pytest.approx(0.05)
    # Two pairs, perfectly separated: p = 1 / C(4, 2).
    assert score_drop_p([(90, 20), (80, 10)]) == pytest.approx(1 / 6)
    # Copies scored higher: the one-sided test finds nothing.
    assert score_drop_p([(10, 90), (20, 80), (30, 70)]) == pytest.approx(1.0)
    assert score_drop_p([(90, 20)]) is None
    assert score_drop_p([]) is None


def test_summary_is_pure_and_counts_by_kind_and_annotator():
    summary = span_control_summary(
        protocol="esa",
        checks={"A1": [(ei.CONNECTIVE, True), (ei.PRONOUN_GENDER, False)], "A2": [(ei.CONNECTIVE, False)]},
        score_pairs={"A1": [(90, 20), (80, 10), (70, 30)], "A2": [(50, 60)]})
    assert (summary["n_checks"], summary["n_missed"]) == (3, 2)
    assert summary["miss_rate"] == pytest.approx(2 / 3)
    assert summary["by_kind"][ei.CONNECTIVE] == {"n_checks": 2, "n_missed": 1, "miss_rate": 0.5}
    assert summary["annotators"]["A2"]["miss_rate"] == 1.0
    assert summary["score_drop"]["annotators"]["A1"]["p"] == pytest.approx(0.05)
    assert summary["score_drop"]["annotators"]["A2"] == {"n_pairs": 1, "p": None}
    assert summary["score_drop"]["n_pairs"] == 4
    assert span_control_summary(protocol="mqm", checks={}, score_pairs={})["score_drop"] is None


# --- through the study: quality, exclusion ---------------------------------------------------

Decide = Callable[[Assignment, list[Candidate]], dict[str, Any]]


def work_through(annotator: Annotator, decide: Decide) -> int:
    """Answer every item the annotator gets; returns how many control items they answered."""
    controls = 0
    while (assignment := assignment_next(annotator=annotator)) is not None:
        judgment_submit(assignment=assignment, payload=decide(assignment, ordered_candidates(assignment)))
        controls += assignment.item.is_spam
        annotator.refresh_from_db()
    return controls


def mqm_answer(severity: str | None, elsewhere: bool = False) -> Decide:
    """Marks the injected error (researcher-side record) with ``severity``; None: says "no error"."""
    def decide(assignment: Assignment, candidates: list[Candidate]) -> dict[str, Any]:
        record = assignment.item.metadata.get(CONTROL_ERROR_KEY)
        annotations: dict[str, Any] = {c.public_id: {"spans": []} for c in candidates}
        if record and severity:
            bad = next(c for c in candidates if c.is_spam)
            start, end = (record["start"], record["end"]) if not elsewhere else (0, 1)
            if elsewhere and start == 0:
                start, end = len(bad.text) - 1, len(bad.text)
            annotations[bad.public_id]["spans"] = [
                {"start": start, "end": end, "category": "Accuracy/Mistranslation", "severity": severity}]
        return {"annotations": annotations}
    return decide


def quality_json(slug: str) -> dict[str, dict[str, Any]]:
    out = StringIO()
    call_command("quality", slug, "--json", stdout=out)
    return {row["annotator"]: row for row in json.loads(out.getvalue())}


@pytest.mark.django_db
def test_quality_json_reports_checks_seen_and_missed_for_an_mqm_study():
    study = owned_import(status="open", data=span_study_file("mqm-q", redundancy=3))
    careful, mild, blind = annotators_create(study=study, count=3)
    assert work_through(careful, mqm_answer("major")) == 3
    assert work_through(mild, mqm_answer("minor")) == 3
    assert work_through(blind, mqm_answer(None)) == 3
    rows = quality_json("mqm-q")
    assert (rows[careful.code]["spam_seen"], rows[careful.code]["spam_failed"]) == (3, 0)
    assert (rows[mild.code]["spam_seen"], rows[mild.code]["spam_failed"]) == (3, 3)
    assert rows[blind.code]["spam_failed_share"] == 1.0
    assert rows[careful.code]["score_drop_p"] is None  # MQM has no score
    summary = study_span_controls(study=study)
    assert summary is not None and (summary["n_checks"], summary["n_missed"]) == (9, 6)
    assert sum(row["n_checks"] for row in summary["by_kind"].values()) == 9


@pytest.mark.django_db
def test_a_major_span_elsewhere_misses_and_spam_check_failed_agrees():
    study = owned_import(status="open", data=span_study_file("mqm-else"))
    annotator = annotators_create(study=study)[0]
    work_through(annotator, mqm_answer("major", elsewhere=True))
    q = annotator_quality(annotator=annotator)
    assert (q.spam_seen, q.spam_failed) == (3, 3)
    control = controls_of(study)[0]
    record = control.metadata[CONTROL_ERROR_KEY]
    bad = degraded(control)
    hit = answer(bad.pk, span(record["start"], record["end"]))
    assert spam_check_failed(study=study, answer=hit, spam_pk=bad.pk) is False
    assert spam_check_failed(study=study, answer=answer(bad.pk), spam_pk=bad.pk) is True


@pytest.mark.django_db
def test_auto_exclusion_applies_to_span_controls_after_the_minimum_checks():
    study = owned_import(status="open", data=span_study_file(
        "mqm-auto", spam_rate=0.5, auto_exclude_share=0.5, auto_exclude_min_checks=3))
    careless, careful = annotators_create(study=study, count=2)
    work_through(careless, mqm_answer("minor"))
    careless.refresh_from_db()
    assert careless.excluded
    assert careless.exclusion_reason == "auto: failed 3 of 3 spam checks"
    work_through(careful, mqm_answer("major"))
    careful.refresh_from_db()
    assert not careful.excluded


@pytest.mark.django_db
def test_auto_exclusion_waits_for_the_minimum_number_of_checks():
    study = owned_import(status="open", data=span_study_file(
        "mqm-wait", spam_rate=0.5, auto_exclude_share=0.5, auto_exclude_min_checks=4))
    careless = annotators_create(study=study)[0]
    work_through(careless, mqm_answer("minor"))
    careless.refresh_from_db()
    assert annotator_quality(annotator=careless).spam_failed == 3
    assert not careless.excluded  # three failed checks, four required


def esa_answer(original: int, copy: int, severity: str | None = "major") -> Decide:
    """Scores every real candidate ``original``, the degraded one ``copy``; marks the error with ``severity``."""
    def decide(assignment: Assignment, candidates: list[Candidate]) -> dict[str, Any]:
        record = assignment.item.metadata.get(CONTROL_ERROR_KEY)
        annotations: dict[str, Any] = {}
        for c in candidates:
            spans = []
            if c.is_spam and severity:
                spans = [{"start": record["start"], "end": record["end"], "severity": severity}]
            annotations[c.public_id] = {"spans": spans, "score": copy if c.is_spam else original}
        return {"annotations": annotations}
    return decide


@pytest.mark.django_db
def test_esa_reports_the_score_drop_p_value():
    study = owned_import(status="open", data=span_study_file("esa-q", protocol="esa", redundancy=2))
    dropping, flat = annotators_create(study=study, count=2)
    work_through(dropping, esa_answer(80, 20))
    work_through(flat, esa_answer(50, 50, severity="minor"))
    rows = quality_json("esa-q")
    assert rows[dropping.code]["score_drop_pairs"] == 3
    # 80, 80, 80 vs 20, 20, 20: U = 9; with ties scipy uses the normal approximation with tie and continuity
    # corrections: var = 3·3/12 · (7 − (24 + 24)/30) = 4.05, z = (9 − 4.5 − 0.5)/√4.05, p = 1 − Φ(z).
    z = (9 - 4.5 - 0.5) / math.sqrt(4.05)
    assert rows[dropping.code]["score_drop_p"] == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)))
    assert rows[dropping.code]["score_drop_p"] < 0.05
    assert rows[dropping.code]["spam_failed"] == 0
    assert rows[flat.code]["score_drop_p"] == pytest.approx(1.0)
    assert rows[flat.code]["spam_failed"] == 3
    summary = study_span_controls(study=study)
    assert summary is not None and summary["score_drop"]["annotators"][dropping.code]["n_pairs"] == 3


@pytest.mark.django_db
def test_da_checks_are_the_score_pairs():
    study = owned_import(status="open", data=span_study_file("da-q", protocol="esa", esa_spans=False))
    annotator = annotators_create(study=study)[0]

    def decide(assignment: Assignment, candidates: list[Candidate]) -> dict[str, Any]:
        # The first control's copy scores lower; the others as high as their originals.
        first = assignment.item.is_spam and assignment.item.spam_of.external_id == controls_of(study)[0].spam_of.external_id
        return {"annotations": {c.public_id: {"score": 10 if c.is_spam and first else 60} for c in candidates}}

    work_through(annotator, decide)
    q = annotator_quality(annotator=annotator)
    assert (q.spam_seen, q.spam_failed) == (3, 2)
    assert q.score_drop_pairs == 3


# --- never shown to annotators ---------------------------------------------------------------

@pytest.mark.django_db
def test_the_error_record_never_reaches_the_annotator_page_or_api():
    study = owned_import(status="open", data=span_study_file("mqm-leak", spam_rate=0.5))
    annotator = annotators_create(study=study)[0]
    while (assignment := assignment_next(annotator=annotator)) is not None and not assignment.item.is_spam:
        judgment_submit(assignment=assignment, payload=mqm_answer(None)(assignment, ordered_candidates(assignment)))
    assert assignment is not None
    record = assignment.item.metadata[CONTROL_ERROR_KEY]
    page = Client().get(reverse("annotation:item-detail", args=[annotator.token, assignment.public_id]))
    assert page.status_code == 200
    api = annotator_client(annotator).get("/api/v1/annotate/next")
    assert api.status_code == 200 and api.json()["assignment"] == assignment.public_id
    bad = degraded(assignment.item)
    for body in (page.content.decode(), api.content.decode()):
        assert bad.text.replace("'", "&#x27;") in body or bad.text in body  # the degraded text is shown …
        for secret in (CONTROL_ERROR_KEY, record["kind"], f'"start": {record["start"]}, "end": {record["end"]}',
                       "is_spam", "spam", "sysA", "degraded"):
            assert secret not in body, secret  # … but never where or what the error is


# --- the researcher's side: QC page, text table, annotator page --------------------------------

@pytest.fixture
def staff_client() -> Client:
    client = Client()
    client.force_login(persona("owner"))  # the owner of the studies the tests make, not a superuser
    return client


@pytest.mark.django_db
def test_qc_page_of_an_esa_study_shows_misses_the_score_drop_and_the_kinds(staff_client):
    study = owned_import(status="open", data=span_study_file("esa-page", protocol="esa", redundancy=2))
    dropping, flat = annotators_create(study=study, count=2)
    work_through(dropping, esa_answer(80, 20))
    work_through(flat, esa_answer(50, 50, severity="minor"))
    html = staff_client.get("/studies/esa-page/quality/").content.decode()
    assert "Controls seen" in html and "Missed %" in html and "Score drop p" in html
    row = re.search(rf'<tr id="q-{flat.code}".*?</tr>', html, re.S)
    assert row is not None and "100%" in row.group(0)  # three of three missed
    row = re.search(rf'<tr id="q-{dropping.code}".*?</tr>', html, re.S)
    assert row is not None and "0.023" in row.group(0)
    kinds = re.search(r'<table[^>]*id="controls-by-kind".*?</table>', html, re.S)
    assert kinds is not None
    summary = study_span_controls(study=study)
    assert summary is not None
    for kind, counts in summary["by_kind"].items():
        assert f"<td>{kind}</td><td class=\"num\">{counts['n_checks']}</td>" in kinds.group(0)
    sorted_page = staff_client.get("/studies/esa-page/quality/?sort=score_drop_p&dir=asc").content.decode()
    assert sorted_page.index(f'id="q-{dropping.code}"') < sorted_page.index(f'id="q-{flat.code}"')


@pytest.mark.django_db
def test_qc_page_of_a_ranking_study_is_unchanged(staff_client):
    from tests.factories import make_study
    make_study(slug="rank-page", n_items=4, settings={"spam_rate": 0.25})
    html = staff_client.get("/studies/rank-page/quality/").content.decode()
    assert "Score drop p" not in html and "Controls seen" not in html and "controls-by-kind" not in html


@pytest.mark.django_db
def test_quality_text_table_names_the_rule_and_the_score_drop():
    study = owned_import(status="open", data=span_study_file("esa-text", protocol="esa", auto_exclude_share=0.9))
    work_through(annotators_create(study=study)[0], esa_answer(80, 20))
    out = StringIO()
    call_command("quality", "esa-text", stdout=out)
    text = out.getvalue()
    header = text.splitlines()[0].split()
    assert header.index("score_drop_p") == header.index("spam_failed") + 2
    assert "exclude above 90% missed control checks" in text


@pytest.mark.django_db
def test_annotator_page_lists_a_missed_control_with_where_the_error_was(staff_client):
    study = owned_import(status="open", data=span_study_file("mqm-detail"))
    annotator = annotators_create(study=study)[0]
    work_through(annotator, mqm_answer("minor"))
    html = staff_client.get(f"/studies/mqm-detail/annotators/{annotator.code}/").content.decode()
    control = controls_of(study)[0]
    record = control.metadata[CONTROL_ERROR_KEY]
    assert f"overlapping [{record['start']}, {record['end']})" in html
    assert f"minor [{record['start']}, {record['end']})" in html


@pytest.mark.django_db
def test_document_controls_keep_the_sentence_list_aligned():
    data = span_study_file("mqm-doc", unit="document", spam_rate=0.5)
    for i, item in enumerate(data["items"]):
        item["source_sentences"] = [f"Quelle {i}a.", f"Quelle {i}b."]
        item.pop("source")
        for k, candidate in enumerate(item["candidates"]):
            candidate["sentences"] = [TEXTS[(i + k) % len(TEXTS)], TEXTS[(i + k + 2) % len(TEXTS)]]
            candidate.pop("text")
    study = owned_import(status="open", data=data)
    assert len(controls_of(study)) == 3
    for control in controls_of(study):
        bad = degraded(control)
        record = control.metadata[CONTROL_ERROR_KEY]
        assert "\n".join(bad.sentences) == bad.text and len(bad.sentences) == 2
        original = control.spam_of.candidates.get(system=bad.system)
        changed = [k for k in range(2) if bad.sentences[k] != original.sentences[k]]
        assert len(changed) == 1  # one sentence carries the error, the other is untouched
        line_start = bad.text.index(bad.sentences[changed[0]])
        assert line_start <= record["start"] < record["end"] <= line_start + len(bad.sentences[changed[0]])


@pytest.mark.django_db
def test_a_replaced_content_word_comes_from_candidates_in_the_same_language():
    english = ["Green apples taste sweet.", "Brown bread smells good.", "Cold water feels fresh."]
    french = ["Pommes vertes, goût sucré.", "Pain complet, odeur agréable.", "Eau froide, sensation fraîche."]
    items = [{"id": f"{lang}-{i}", "source": "Quelle.", "target_language": lang,
              "candidates": [{"system": "ref", "text": text, "is_reference": True},
                             {"system": "sysA", "text": text.replace(".", " !")}]}
             for lang, texts in (("en", english), ("fr", french)) for i, text in enumerate(texts)]
    data = {"slug": "mixed", "title": "Mixed", "protocol": "esa", "items": items,
            "settings": {"redundancy": 1, "spam_rate": 0.5, "seed": 3, "instructions": "Score.", "unit": "sentence"}}
    study = owned_import(status="open", data=data)
    vocabulary = {"en": {w for t in english for w in re.findall(r"\w+", t)},
                  "fr": {w for t in french for w in re.findall(r"\w+", t)}}
    controls = controls_of(study)
    assert {c.target_language for c in controls} == {"en", "fr"}
    for control in controls:
        record = control.metadata[CONTROL_ERROR_KEY]
        assert record["kind"] == ei.CONTENT_WORD
        assert record["after"].lower() in {w.lower() for w in vocabulary[control.target_language]}


@pytest.mark.django_db
def test_span_quality_takes_the_same_queries_whatever_the_number_of_annotators():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.quality.checks import study_quality

    study = owned_import(status="open", data=span_study_file("esa-queries", protocol="esa", redundancy=3))
    first, *others = annotators_create(study=study, count=3)
    work_through(first, esa_answer(80, 20))
    with CaptureQueriesContext(connection) as one:
        study_quality(study=study)
    for annotator in others:
        work_through(annotator, esa_answer(70, 30))
    with CaptureQueriesContext(connection) as three:
        rows = study_quality(study=study)
    assert len(three.captured_queries) == len(one.captured_queries) <= 5
    assert [row.spam_seen for row in rows] == [3, 3, 3]
