"""No "better" verdict from a paired test on too few documents, and none at p ≥ α (issue 22).

The TED demo's compare page named a "better" system in 78 per-document t-tests on 3 documents (2 degrees
of freedom), even at p = 0.94.  Now: fewer than 10 units give no verdict and say why; with enough units a
system is called better only at p < 0.05; the command text, the JSON and the page say the same.
"""
from __future__ import annotations

from io import StringIO

import pandas as pd
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from evaluators.comparison.core import compare_frames
from evaluators.comparison.systems import ALPHA, MIN_UNITS
from evaluators.metrics.scores import scores_import
from tests.factories import make_study, persona


def frame(values: dict[str, list[float]], documents: int | None = None) -> pd.DataFrame:
    """Scores of evaluator m; with ``documents``, item k belongs to document k % documents."""
    return pd.DataFrame([{"evaluator": "m", "item": f"i{k}", "system": s, "score": v,
                          "document": f"d{k % documents}" if documents else ""}
                         for s, vs in values.items() for k, v in enumerate(vs)])


def t_tests_block(scores: pd.DataFrame) -> dict:
    items = pd.DataFrame({"item": sorted(scores["item"].unique()),
                          "document": [scores.loc[scores["item"] == i, "document"].iloc[0]
                                       for i in sorted(scores["item"].unique())], "phenomenon": ""})
    result = compare_frames(pd.DataFrame(), scores, protocol="ranking", n_boot=50, items=items,
                            evaluators=[{"name": "m", "higher_is_better": True}])
    return result["evaluators"][0]["paired_t_tests"]


def test_three_documents_give_no_verdict_even_with_a_small_p():
    # B beats A by about 5 on every item, 3 documents of 4 items: p is tiny, but 3 documents are 2 df
    a = [10.0, 11.0, 12.0, 13.0, 10.5, 11.5, 12.5, 13.5, 10.2, 11.2, 12.2, 13.2]
    b = [v + 5 + 0.1 * (k % 3) for k, v in enumerate(a)]
    block = t_tests_block(frame({"A": a, "B": b}, documents=3))
    test = block["tests"][0]
    assert block["unit"] == "document" and block["n_units"] == 3 and test["p_value"] < ALPHA
    assert test["favours"] == "B" and test["better"] is None
    assert test["verdict"] == "3 documents: too few for a per-document test (at least 10): no verdict"
    assert block["note"] == test["verdict"]


def test_no_verdict_at_p_at_or_above_alpha_with_enough_units():
    n = MIN_UNITS + 2
    a = [float(k % 5) for k in range(n)]
    b = [v + (0.5 if k % 2 else -0.45) for k, v in enumerate(a)]  # a difference near 0: p large
    block = t_tests_block(frame({"A": a, "B": b}))
    test = block["tests"][0]
    assert block["n_units"] == n and "note" not in block and test["p_value"] >= ALPHA
    assert test["better"] is None and test["verdict"].startswith("p = ") and "≥ 0.05: no difference shown" in test["verdict"]
    shifted = t_tests_block(frame({"A": a, "B": [v + 1 + 0.01 * k for k, v in enumerate(a)]}))["tests"][0]
    assert shifted["p_value"] < ALPHA and shifted["better"] == "B" and "verdict" not in shifted


@pytest.mark.django_db
def test_the_page_and_the_command_show_no_better_on_three_documents():
    study = make_study(slug="ted-like", n_items=6, n_candidates=3, documents=3)
    lines = ["item,system,score"] + [f"ext-{i},{s},{i + k}" for i in range(6)
                                     for k, s in ((1, "sys1"), (5 + 0.3 * (i % 2), "sys2"))]
    scores_import(study=study, file_name="s.csv", content="\n".join(lines), name="m", higher_is_better=True)
    out = StringIO()
    call_command("compare", study.slug, "--bootstrap", "20", stdout=out)
    assert ("paired t-tests (per document): 3 documents: too few for a per-document test (at least 10): "
            "no verdict") in out.getvalue()
    assert "differ at p <" not in out.getvalue()
    client = Client()
    client.force_login(persona("owner"))
    page = client.get(reverse("compare-report", args=[study.slug]), {"bootstrap": 20}).content.decode()
    assert 'data-field="t-test-note">3 documents: too few for a per-document test' in page
    row = page[page.index('data-pair="sys1|sys2"'):]
    row = row[:row.index("</tr>")]
    assert "<td>—</td>" in row and "sys2</td>" not in row  # no verdict; the summary above says why, once
