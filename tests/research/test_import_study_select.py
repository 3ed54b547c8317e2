"""`import_study --select METHOD[:METRIC] --budget N|P%`: the study is created on the selected items only."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from evaluators.stats.selection import metric_var, random_utilities
from evaluators.study_selection import SelectionError, SelectionRequest, select_items
from studies.importing.study_file import parse_study
from studies.lifecycle.invariants import study_copy
from studies.models import Item, Study
from tests.factories import study_file

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]

N_ITEMS = 8
SYSTEMS = ("sys1", "sys2", "sys3")


def _study(tmp_path, **kwargs):
    data = study_file(slug=kwargs.pop("slug", "sel"), n_items=N_ITEMS, n_candidates=4, **kwargs)
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path), data


def _scores(tmp_path, matrix, *, scorer="chrF", skip=()):
    """A long CSV of ``matrix`` (systems × items); cells in ``skip`` left out; the reference scored too."""
    lines = ["system,segment,scorer,score"]
    for j in range(matrix.shape[1]):
        lines.append(f"reference,ext-{j},{scorer},100")
        for i, system in enumerate(SYSTEMS):
            if (system, f"ext-{j}") not in skip:
                lines.append(f"{system},ext-{j},{scorer},{matrix[i, j]}")
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _matrix(seed=3):
    return np.round(np.random.default_rng(seed).uniform(0, 100, size=(len(SYSTEMS), N_ITEMS)), 3)


def _real_ids(slug="sel"):
    return set(Item.objects.filter(study__slug=slug, is_spam=False).values_list("external_id", flat=True))


def test_metric_var_from_a_score_file_keeps_the_top_budget_and_records_the_selection(tmp_path, capsys):
    matrix = _matrix()
    path, _ = _study(tmp_path)
    call_command("import_study", path, "--select", "metric_var:chrF", "--budget", "3",
                 "--scores", _scores(tmp_path, matrix))
    order = np.argsort(-metric_var(matrix), kind="stable")
    expected = [f"ext-{j}" for j in order[:3]]
    assert _real_ids() == set(expected)
    record = Study.objects.get(slug="sel").provenance["selection"]
    assert record["method"] == "metric_var" and record["metric"] == "chrF"
    assert (record["n_kept"], record["n_total"], record["n_systems"], record["budget"]) == (3, N_ITEMS, 3, "3")
    assert record["scores"]["source"] == "file" and record["scores"]["file"] == "scores.csv"
    assert len(record["scores"]["sha256"]) == 64
    assert record["kept_sha256"] == hashlib.sha256("\n".join(expected).encode()).hexdigest()
    assert "3 of 8 items kept" in capsys.readouterr().err


def test_a_percentage_budget_and_random_with_a_seed(tmp_path):
    path, _ = _study(tmp_path)
    call_command("import_study", path, "--select", "random", "--budget", "50%", "--seed", "7")
    order = np.argsort(-random_utilities(N_ITEMS, 7), kind="stable")
    assert _real_ids() == {f"ext-{j}" for j in order[:4]}
    record = Study.objects.get(slug="sel").provenance["selection"]
    assert (record["seed"], record["metric"], record["scores"]["source"]) == (7, None, None)


def test_chrf_is_computed_against_the_reference_when_no_file_is_given(tmp_path):
    path, data = _study(tmp_path)
    # Item 5's sys1 copies the reference, so its chrF spread is the largest: metric_var keeps it first.
    data["items"][5]["candidates"][1]["text"] = data["items"][5]["candidates"][0]["text"]
    (tmp_path / "study.json").write_text(json.dumps(data), encoding="utf-8")
    call_command("import_study", path, "--select", "metric_var:chrf", "--budget", "1")
    assert _real_ids() == {"ext-5"}
    record = Study.objects.get(slug="sel").provenance["selection"]
    assert record["scores"]["source"] == "computed" and "reference" in record["scores"]["reference"]


def test_control_items_are_made_from_the_kept_items_only(tmp_path):
    path, _ = _study(tmp_path, settings={"spam_rate": 0.5})
    call_command("import_study", path, "--select", "random", "--budget", "4")
    kept = _real_ids()
    spam = Item.objects.filter(study__slug="sel", is_spam=True)
    assert len(kept) == 4 and spam.exists()
    assert {s.spam_of.external_id for s in spam.select_related("spam_of")} <= kept


@pytest.mark.parametrize("args, fragment", [
    (["--select", "metric_var:chrF", "--budget", "0"], "--budget:"),
    (["--select", "metric_var:chrF", "--budget", "120%"], "--budget:"),
    (["--select", "best", "--budget", "3"], "--select: unknown method 'best'"),
    (["--select", "metric_var", "--budget", "3"], "--select: metric_var needs a metric"),
    (["--select", "metric_var:comet", "--budget", "3"], "'comet' is not computed here"),
    (["--select", "diversity:lm", "--budget", "3"], "--select: diversity:lm"),
    (["--select", "random"], "--select: needs --budget"),
    (["--budget", "3"], "--budget: only with --select"),
])
def test_bad_options_name_the_option_and_store_nothing(tmp_path, args, fragment):
    path, _ = _study(tmp_path)
    with pytest.raises(CommandError) as exc:
        call_command("import_study", path, *args)
    assert fragment in str(exc.value)
    assert not Study.objects.exists()


def test_a_missing_score_is_named_and_nothing_is_stored(tmp_path):
    path, _ = _study(tmp_path)
    scores = _scores(tmp_path, _matrix(), skip={("sys2", "ext-4")})
    with pytest.raises(CommandError) as exc:
        call_command("import_study", path, "--select", "metric_avg:chrF", "--budget", "3", "--scores", scores)
    assert "--scores: chrF: no score for system 'sys2' on item 'ext-4'" in str(exc.value)
    assert not Study.objects.exists()


def test_an_unknown_scorer_and_a_file_of_other_ids_are_refused(tmp_path):
    path, _ = _study(tmp_path)
    scores = _scores(tmp_path, _matrix())
    with pytest.raises(CommandError, match="no scorer 'BLEU'"):
        call_command("import_study", path, "--select", "metric_avg:BLEU", "--budget", "3", "--scores", scores)
    (tmp_path / "other.csv").write_text("system,segment,scorer,score\nsys1,x-1,chrF,3\n", encoding="utf-8")
    with pytest.raises(CommandError, match="no segment of other.csv is an item id"):
        call_command("import_study", path, "--select", "metric_avg:chrF", "--budget", "3",
                     "--scores", str(tmp_path / "other.csv"))
    assert not Study.objects.exists()


def test_a_document_study_is_refused():
    parsed = parse_study(study_file(slug="doc", n_items=4, documents=2, settings={"unit": "document"}))
    with pytest.raises(SelectionError) as exc:
        select_items(parsed, SelectionRequest("random", "", "2"))
    assert "document blocks" in exc.value.errors["method"][0]


def test_computed_chrf_needs_a_reference_on_every_item():
    data = study_file(slug="noref", n_items=3)
    data["items"][1]["candidates"][0]["is_reference"] = False
    with pytest.raises(SelectionError) as exc:
        select_items(parse_study(data), SelectionRequest("metric_var", "chrf", "2"))
    assert "'ext-1'" in exc.value.errors["scores"][0]


def test_a_copy_keeps_the_selection_but_not_an_import_of_judgments(tmp_path):
    path, _ = _study(tmp_path)
    call_command("import_study", path, "--select", "random", "--budget", "2")
    study = Study.objects.get(slug="sel")
    study.provenance = {**study.provenance, "how": "imported", "file": "x.tsv"}
    study.save(update_fields=["provenance"])
    copy = study_copy(study=study, slug="sel-copy")
    assert copy.provenance == {"selection": study.provenance["selection"]}
    assert _real_ids("sel-copy") == _real_ids("sel")
