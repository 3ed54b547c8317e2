"""Context probes: errors only the document reveals, their seeded copies, and their coverage of the DiaBLa demo."""
from __future__ import annotations

import random
from typing import Any

import pytest

from studies.controls.context_probes import (ADDRESS, CONNECTIVE, PRONOUN, TERM, context_shown, draw_probe,
                                             probe_options, sentence_offsets)
from studies.controls.spam import PROBE_KEY, PROBE_SUFFIX, spam_items_create
from studies.demo.coverage import demo_probe_coverage
from studies.importing.study_file import study_import
from studies.models import Item


def _only(options: dict, kind: str):
    assert kind in options, options
    return options[kind]


# --- the three kinds -------------------------------------------------------------------------------

@pytest.mark.parametrize("language, context, text, before, after", [
    ("en", ["It rained all day."], "But we went out anyway.", "But", "So"),
    ("en", ["It rained all day."], "Oh, so we stayed in.", "so", "but"),
    ("de", ["Es regnete den ganzen Tag."], "Aber wir gingen trotzdem hinaus.", "Aber", "Also"),
    ("fr", ["Il a plu toute la journée."], "Mais nous sommes sortis quand même.", "Mais", "Donc"),
])
def test_a_sentence_opening_connective_gets_the_contrary_relation(language, context, text, before, after):
    probe = _only(probe_options(text=text, context=context, language=language), CONNECTIVE)[0]
    assert (probe.before, probe.after) == (before, after)
    assert probe.text[probe.start:probe.end] == after
    assert probe.distance == 1 and probe.evidence == context[-1]


def test_a_connective_without_a_sentence_before_or_inside_a_sentence_is_no_probe():
    assert CONNECTIVE not in probe_options(text="But we went out anyway.", context=[], language="en")
    assert CONNECTIVE not in probe_options(text="We stayed, but they went out.", context=["It rained."],
                                           language="en")
    # "because" opens a clause of its own sentence: a sentence-level change, not a context probe
    assert CONNECTIVE not in probe_options(text="Because it rained, we stayed.", context=["Hi."], language="en")


@pytest.mark.parametrize("language, context, text, word, synonym", [
    ("en", ["We rented a car in Nice."], "The car was small.", "car", "vehicle"),
    ("de", ["Wir mieteten ein Auto in Nizza."], "Das Auto war klein.", "Auto", "Wagen"),
    ("fr", ["Nous avons loué une voiture.", "C'était à Nice."], "La voiture était petite.", "voiture", "auto"),
])
def test_a_term_used_earlier_is_replaced_by_a_synonym(language, context, text, word, synonym):
    probe = _only(probe_options(text=text, context=context, language=language), TERM)[0]
    assert (probe.before, probe.after) == (word, synonym)
    assert probe.evidence == word and probe.evidence_line == 0


def test_a_term_used_for_the_first_time_is_no_probe():
    assert TERM not in probe_options(text="The car was small.", context=["We rented a bike."], language="en")


def test_a_pronoun_disagrees_with_an_antecedent_two_sentences_back():
    context = ["My sister called this morning.", "The weather was awful."]
    probe = _only(probe_options(text="She wants to visit in May.", context=context, language="en"), PRONOUN)[0]
    assert (probe.before, probe.after) == ("She", "He")
    assert probe.evidence_line == 0 and probe.distance == 2


def test_french_and_german_pronouns():
    fr = probe_options(text="Elle est toujours en panne.", context=["J'ai une voiture neuve.", "Il pleut."],
                       language="fr")
    assert [(p.before, p.after, p.distance) for p in fr[PRONOUN]] == [("Elle", "Il", 2)]
    de = probe_options(text="Er kommt morgen.", context=["Mein Vater ruft an.", "Das Wetter ist schlecht."],
                       language="de")
    assert [(p.before, p.after) for p in de[PRONOUN]] == [("Er", "Sie")]


@pytest.mark.parametrize("context", [
    ["My sister called this morning.", "Her husband was ill."],  # a mention in the sentence just before
    ["My sister called this morning.", "My father was ill."],  # the other gender in between
    ["The weather was awful.", "Nothing happened."],  # no antecedent at all
])
def test_no_pronoun_probe_when_the_antecedent_is_not_two_sentences_back_alone(context):
    assert PRONOUN not in probe_options(text="She wants to visit in May.", context=context, language="en")


def test_impersonal_french_il_is_never_changed():
    options = probe_options(text="Il faut partir.", context=["Mon frère arrive.", "Oui."], language="fr")
    assert PRONOUN not in options


def test_without_the_target_context_on_screen_only_connectives_use_it():
    context = ["We rented a car.", "It rained."]
    hidden = probe_options(text="But the car was small.", context=context, language="en", context_on_screen=False)
    assert set(hidden) == {CONNECTIVE}
    # the candidate's own earlier sentence is on screen: a term repeated inside it still counts
    inside = probe_options(text="We took the car. The car was small.", context=[], language="en",
                           context_on_screen=False)
    assert [(p.before, p.evidence_line, p.error_line) for p in inside[TERM]] == [("car", 0, 1)]


@pytest.mark.parametrize("context, text, before, after, evidence", [
    (["Tu ne vas pas rester sans rien faire !", "J'ai trop chaud."], "Tu veux vraiment qu'on reste ici ?",
     "Tu veux", "Vous voulez", 0),
    (["Vous partez pour des vacances ?"], "Mais vous savez, c'est loin.", "vous savez", "tu sais", 0),
    (["Il pleut.", "Tu es là ?"], "Je prends ta voiture.", "ta", "votre", 1),
    (["Oh t'exagères."], "S'il te plaît, on peut faire autre chose ?", "S'il te plaît", "S'il vous plaît", 0),
    (["Avez-vous faim ?", "Oui."], "Voulez-vous un gâteau ?", "Voulez-vous", "Veux-tu", 0),
])
def test_french_address_is_switched_against_the_register_chosen_earlier(context, text, before, after, evidence):
    probe = _only(probe_options(text=text, context=context, language="fr"), ADDRESS)[0]
    assert (probe.before, probe.after) == (before, after)
    assert probe.text == text.replace(before, after, 1)
    assert probe.evidence_line == evidence and probe.error_line == len(context)


@pytest.mark.parametrize("context, text", [
    (["Tu es là ?"], "Tu peux venir, s'il te plaît ?"),  # two forms of address: one changed is wrong alone
    (["Tu es là ?", "Vous êtes là ?"], "Tu veux un café ?"),  # both registers earlier: no choice to contradict
    (["Il pleut.", "Oui."], "Tu veux un café ?"),  # no form of address earlier
    (["Vous êtes là ?"], "Tu veux un café ?"),  # the original already differs from the earlier choice
    (["Tu es là ?"], "Il a pris le ton de sa mère."),  # the noun *ton*
])
def test_no_address_probe_without_one_register_earlier_and_one_form_in_the_sentence(context, text):
    assert ADDRESS not in probe_options(text=text, context=context, language="fr")


def test_address_probes_are_french_only():
    assert ADDRESS not in probe_options(text="Du kommst morgen.", context=["Du bist da?"], language="de")
    assert ADDRESS not in probe_options(text="You know it.", context=["Do you?"], language="en")


def test_context_lines_shown_as_they_are_in_the_source_side_context_count_as_on_screen():
    target = ["We rented a car.", "Nous avons loué une voiture.", "It rained."]
    source = ["We rented a car.", "Nous avons loué une voiture.", "Il pleuvait."]
    assert context_shown(target_context=target, source_context=source, show_source=True) == [True, True, False]
    assert context_shown(target_context=target, source_context=source, show_source=False) == [True, True, True]
    english = ["We rented a car.", "It rained."]
    shown = probe_options(text="The car was small.", context=english, language="en",
                          context_on_screen=[True, False])
    assert [(p.before, p.evidence_line) for p in shown[TERM]] == [("car", 0)]
    assert TERM not in probe_options(text="The car was small.", context=english, language="en",
                                     context_on_screen=[False, True])
    # a pronoun's antecedent two lines back is unknown when a line in between is not on screen
    assert PRONOUN not in probe_options(text="She wants to visit.", context=["My sister called.", "Il pleut."],
                                        language="en", context_on_screen=[True, False])
    with pytest.raises(ValueError, match="context_on_screen"):
        probe_options(text="The car.", context=english, language="en", context_on_screen=[True])


def test_other_languages_get_no_probe():
    assert probe_options(text="Aber wir gingen.", context=["Es regnete."], language="es") == {}


def test_sentence_offsets_follow_the_sentence_list_or_the_text():
    text = "One here.\nTwo there."
    assert sentence_offsets(text, ["One here.", "Two there."]) == [(0, 9), (10, 20)]
    assert sentence_offsets("One here. Two there.") == [(0, 9), (10, 20)]


def test_the_draw_is_seeded():
    options = probe_options(text="But the car was small. So we left.", context=["We rented a car."], language="en")
    draws = {(p.kind, p.start) for p in (draw_probe(options, random.Random(3)) for _ in range(3))}
    assert len(draws) == 1


# --- probe copies in a study -------------------------------------------------------------------------

def _story_file(slug: str, protocol: str = "ranking", n_candidates: int = 2, **settings: Any) -> dict[str, Any]:
    """Six items of two documents; every reference can take a connective, term or pronoun probe."""
    texts = ["But the car was too small for us.", "So my sister drove the car to Lyon.",
             "However, the car broke down there.", "She called a garage at once.", "But the car was fine again.",
             "And then my sister drove home."]
    items = []
    for k, text in enumerate(texts):
        cands = [{"system": "reference", "text": text, "is_reference": True}]
        cands += [{"system": f"sys{j}", "text": f"Output {j} of sentence {k} here."} for j in range(1, n_candidates)]
        items.append({"id": f"i{k}", "document_id": f"d{k % 2}", "position": k // 2, "source": f"Source {k}.",
                      "target_context": ["My sister rented a car.", "It was raining.", texts[k - 1]],
                      "candidates": cands})
    base = {"redundancy": 1, "spam_rate": 0.0, "probe_rate": 0.5, "unit": "sentence", "target_language": "en",
            "seed": 11, "instructions": "Rank them.", **settings}
    if protocol == "judgment":
        base["labels"] = ["good", "bad"]
    return {"slug": slug, "title": slug, "protocol": protocol, "settings": base, "items": items}


def _address_file(slug: str, protocol: str = "ranking", n_candidates: int = 2, **settings: Any) -> dict[str, Any]:
    """Four French items of two documents whose only possible probe is a tu/vous switch."""
    texts = ["Tu veux un café ?", "Tu peux fermer la porte ?", "Je prends ta voiture demain.",
             "Tu sais que je pars ce soir."]
    data = _story_file(slug, protocol=protocol, n_candidates=n_candidates, target_language="fr", **settings)
    data["items"] = data["items"][:len(texts)]
    for item, text in zip(data["items"], texts):
        item["candidates"][0]["text"] = text
        item["target_context"] = ["Tu es là ?", "Il fait beau."]
    return data


@pytest.mark.django_db
def test_address_probe_copies_keep_their_record_apart():
    study = study_import(data=_address_file("address"), status="open")
    records = [i.metadata[PROBE_KEY] for i in study.items.filter(metadata__has_key=PROBE_KEY)]
    assert len(records) == 2 and {r["kind"] for r in records} == {ADDRESS}
    assert all(r["evidence_line"] == 0 and r["distance"] == 2 for r in records)


@pytest.mark.django_db
def test_probe_copies_are_control_copies_with_their_record_kept_apart():
    study = study_import(data=_story_file("probes"), status="open")
    probes = list(study.items.filter(metadata__has_key=PROBE_KEY).prefetch_related("candidates"))
    assert len(probes) == 3  # round(0.5 × 6)
    assert study.n_spam_items == 3 and study.n_real_items == 6
    documents = set()
    for copy in probes:
        assert copy.is_spam and copy.spam_of is not None and copy.external_id.endswith(PROBE_SUFFIX)
        record = copy.metadata[PROBE_KEY]
        changed = [c for c in copy.candidates.all() if c.is_spam]
        assert len(changed) == 1 and not changed[0].is_reference
        original = [c for c in copy.candidates.all() if c.system == record["original_system"]][0]
        assert original.text == copy.spam_of.candidates.get(system="reference").text
        assert changed[0].text[record["start"]:record["end"]] == record["after"]
        assert original.text.replace(record["before"], record["after"], 1) == changed[0].text
        documents.add(copy.spam_of.document_id)
    assert documents == {"d0", "d1"}  # one per document first


@pytest.mark.django_db
def test_turning_probes_on_leaves_the_spam_copies_as_they_were():
    without = study_import(data=_story_file("p-off", spam_rate=0.4, probe_rate=0.0), status="open")
    with_probes = study_import(data=_story_file("p-on", spam_rate=0.4, probe_rate=0.5), status="open")

    def spam_texts(study):
        return sorted(c.text for i in study.items.filter(is_spam=True).exclude(metadata__has_key=PROBE_KEY)
                      for c in i.candidates.filter(is_spam=True))
    assert spam_texts(without) == spam_texts(with_probes) and spam_texts(without)
    assert with_probes.n_spam_items == without.n_spam_items + 3
    again = spam_items_create(study=with_probes)
    assert sorted(i.external_id for i in again) == sorted(
        with_probes.items.filter(is_spam=True).values_list("external_id", flat=True))


@pytest.mark.django_db
def test_a_single_candidate_is_changed_in_place():
    study = study_import(data=_story_file("p-judge", protocol="judgment", n_candidates=1), status="open")
    copy = study.items.filter(metadata__has_key=PROBE_KEY).first()
    assert copy is not None and copy.metadata[PROBE_KEY]["original_system"] is None
    assert [c.is_spam for c in copy.candidates.all()] == [True]


@pytest.mark.django_db
def test_probe_rate_is_checked_like_spam_rate():
    from studies.importing.study_file import StudyFileError, parse_study
    with pytest.raises(StudyFileError) as refused:
        parse_study(_story_file("p-bad", probe_rate=0.7))
    assert any("probe_rate" in e for e in refused.value.errors)
    assert not Item.objects.exists()


# --- coverage of the DiaBLa demo ---------------------------------------------------------------------

def test_at_least_80_percent_of_the_diabla_dialogues_get_a_probe(capsys):
    coverage = demo_probe_coverage()
    dialogues, studies = coverage["dialogues"], coverage["studies"]
    assert dialogues["eligible"] == 24  # 12 dialogues, each read in English and in French, all ≥ 3 turns
    with capsys.disabled():
        print(f"\nDiaBLa dialogues with a probe: {dialogues['with_probe']}/{dialogues['eligible']} "
              f"({dialogues['share']:.0%}) {dialogues['by_kind']}; demo-study documents: {studies['with_probe']}/"
              f"{studies['eligible']} ({studies['share']:.0%}) "
              + ", ".join(f"{slug} {s['with_probe']}/{s['eligible']}" for slug, s in studies["by_study"].items()))
    assert dialogues["share"] >= 0.8
    assert sum(dialogues["by_kind"].values()) > 0 and set(dialogues["by_kind"]) == {TERM, PRONOUN, CONNECTIVE, ADDRESS}


def test_demo_study_documents_with_a_probe_do_not_fall_below_the_measured_share():
    """The demo *study* documents fall short of 80% (docs/ai-assistance.md, "Coverage of the demo": the studies
    that show the source show their context in the source language); this holds the measured 55 of 96."""
    studies = demo_probe_coverage()["studies"]
    assert studies["eligible"] == 96
    assert studies["with_probe"] >= 55
    assert studies["by_study"]["diabla-connective-preference"]["share"] >= 0.9
