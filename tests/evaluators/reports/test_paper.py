"""A study report as a paper needs it: the methods paragraph and LaTeX/Markdown tables (evaluators/reports/paper.py)."""
from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluators.reports import paper
from tests.report_study import choice_study, ranking_study

pytestmark = pytest.mark.django_db


def run(*args: str, **kw) -> str:
    out = StringIO()
    call_command("agreement", *args, stdout=out, **kw)
    return out.getvalue()


def test_methods_paragraph_states_the_reports_figures_with_citations():
    study = ranking_study()
    report = json.loads(run(study.slug, json=True))
    text = run(study.slug, methods=True)
    ac1 = report["coefficients"]["gwet_ac1"]["value"]
    assert f"Gwet's AC1 = {ac1:.3f}" in text and "(Gwet, 2008)" in text and "Fleiss, 1971" in text
    assert f"giving {report['policies']['n_judgments_in']} judgments" in text
    assert f"version {paper.version()}" in text
    assert "expected wins (Bojar et al., 2016)" in text
    best = report["ranking"]["systems"][0]
    assert f"{best['system']} ({best['expected_wins']:.3f}, {best['bt']:.2f})" in text
    assert "each item was judged by" in text and "ranked the candidate translations" in text


def test_latex_and_markdown_tables_carry_the_reports_numbers():
    study = ranking_study()
    report = json.loads(run(study.slug, json=True))
    latex = run(study.slug, table="ranking")
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    n_rows = len(report["ranking"]["systems"])
    body = latex.split("\\midrule")[1].split("\\bottomrule")[0]
    assert body.count("\\\\") == n_rows
    for s in report["ranking"]["systems"]:
        assert f"{s['expected_wins']:.3f}" in latex
    md = run(study.slug, table="agreement", table_format="markdown")
    lines = [line for line in md.splitlines() if line.startswith("|")]
    assert lines[0].startswith("| Coefficient | Value")
    assert any(line.startswith("| Gwet's AC1 | " + f"{report['coefficients']['gwet_ac1']['value']:.3f}")
               for line in lines)
    latex_agreement = run(study.slug, table="agreement")
    assert "Gwet's AC$_1$" in latex_agreement and "Fleiss' $\\kappa$" in latex_agreement
    # Escaping: underscores in system names would break LaTeX.
    assert paper._latex_escape("sys_1 & 50%") == "sys\\_1 \\& 50\\%"


def test_choice_study_paragraph_and_errors():
    study = choice_study()
    text = run(study.slug, methods=True)
    assert "chose the better of the candidate translations" in text
    with pytest.raises(CommandError, match="need a study SLUG"):
        run(methods=True, judgments="x.csv")
    with pytest.raises(ValueError, match="table: 'x'"):
        paper.table({}, "x", "latex")
    assert re.search(r"\d+ annotators?", text)


def test_report_page_shows_the_paragraph_and_serves_the_tables(client, admin_user):
    study = ranking_study()
    client.force_login(admin_user)
    page = client.get(f"/reports/{study.slug}/").content.decode()
    assert 'id="methods-paragraph"' in page and "Gwet&#x27;s AC1 =" in page
    assert f"/reports/{study.slug}/ranking.tex" in page and f"/reports/{study.slug}/agreement.md" in page
    assert 'name="ranking_coding"' in page
    tex = client.get(f"/reports/{study.slug}/ranking.tex")
    assert tex.status_code == 200 and tex["Content-Type"].startswith("text/x-tex") and b"\\toprule" in tex.content
    md = client.get(f"/reports/{study.slug}/agreement.md?ranking_coding=position")
    assert md.status_code == 200 and md.content.decode().startswith("| Coefficient |")
    assert client.get(f"/reports/{study.slug}/ranking.doc").status_code == 404
    assert client.get(f"/reports/{study.slug}/ranking.tex?ranking_coding=rank").status_code == 400
