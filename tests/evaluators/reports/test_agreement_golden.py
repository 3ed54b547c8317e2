"""``agreement SLUG``'s output against golden files written by an earlier version of the report code.

The report's speed work (the export frame, the stats frame, the span blocks) must leave every number and every
line unchanged: each case below prints ``agreement SLUG --json`` (and the text) on a study built the same way every
run, and compares it with ``tests/evaluators/reports/golden/NAME``.  Annotator codes are random
(``annotation.models.annotator_code``) and order the pairwise kappas, so here they are numbered in creation order.

``AGREEMENT_GOLDEN_WRITE=1 pytest tests/evaluators/reports/test_agreement_golden.py`` rewrites the files; do that
only on a version of the code whose output is known to be right.
"""
from __future__ import annotations

import io
import itertools
import json
import math
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command

from annotation.models import Annotator
from studies.models import Study
from tests.report_study import choice_study, ranking_study

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]

GOLDEN = Path(__file__).resolve().parent / "golden"
FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "wmt-mqm" / "mqm_ted_ende.subset.tsv"
SEVERITY_SWAP = {"Minor": "Major", "Major": "Minor"}


@pytest.fixture(autouse=True)
def numbered_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Annotator codes a00000001, a00000002, ... in creation order instead of random ones."""
    numbers = itertools.count(1)
    make: Callable[[], str] = lambda: f"a{next(numbers):08d}"  # noqa: E731
    monkeypatch.setattr(Annotator._meta.get_field("code"), "_get_default", make)


def import_mqm(path: Path, slug: str) -> Study:
    call_command("import_judgments", str(path), "--format", "mqm-tsv", "--unclosed-spans", "close-at-end",
                 "--slug", slug, stdout=io.StringIO())
    return Study.objects.get(slug=slug)


def overlapping_release(tmp_path: Path) -> Path:
    """The release subset with a second rater on every (system, segment): the rows again under the next rater's
    name, every third error's severity swapped, so the agreement coefficients and the span agreement are defined."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    rater = header.split("\t").index("rater")
    severity = header.split("\t").index("severity")
    extra = []
    for n, line in enumerate(rows):
        cells = line.split("\t")
        cells[rater] = f"rater{int(cells[rater].removeprefix('rater')) % 4 + 1}x"
        if n % 3 == 0:
            cells[severity] = SEVERITY_SWAP.get(cells[severity], cells[severity])
        extra.append("\t".join(cells))
    path = tmp_path / "overlap.tsv"
    path.write_text("\n".join([header, *rows, *extra]) + "\n", encoding="utf-8")
    return path


def output(study: Study, *args: str) -> str:
    """``agreement SLUG ARGS``, computed, then read back from the stored report (as another process would: the
    process's own cache emptied first), which must print the same."""
    printed = []
    for _ in range(2):
        cache.clear()
        out = io.StringIO()
        call_command("agreement", study.slug, *args, stdout=out)
        printed.append(out.getvalue())
    assert printed[1] == printed[0]
    return printed[0]


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("AGREEMENT_GOLDEN_WRITE") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if name.endswith(".json"):
        # Floats to 1e-12 relative: NumPy's SIMD kernels (and so a Pearson r or a standard error) differ in the
        # last bit between CPUs; every other value, every key and the structure exactly.
        assert_same(json.loads(text), json.loads(expected), "$")
        return
    assert text == expected


def assert_same(got: object, expected: object, where: str) -> None:
    """``got == expected`` with floats compared to 1e-12 relative (1e-300 absolute); ``where`` names the place."""
    if isinstance(expected, float) and isinstance(got, float):
        assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-300), f"{where}: {got!r} != {expected!r}"
    elif isinstance(expected, dict) and isinstance(got, dict):
        assert list(got) == list(expected), f"{where}: keys {list(got)} != {list(expected)}"
        for key, value in expected.items():
            assert_same(got[key], value, f"{where}.{key}")
    elif isinstance(expected, list) and isinstance(got, list):
        assert len(got) == len(expected), f"{where}: {len(got)} entries != {len(expected)}"
        for k, (a, b) in enumerate(zip(got, expected)):
            assert_same(a, b, f"{where}[{k}]")
    else:
        assert type(got) is type(expected) and got == expected, f"{where}: {got!r} != {expected!r}"


def test_imported_release_subset(tmp_path):
    study = import_mqm(FIXTURE, "ted")
    check("mqm_release.json", normalised(output(study, "--json")))
    check("mqm_release.txt", output(study))


def test_imported_release_with_two_raters_per_segment(tmp_path):
    study = import_mqm(overlapping_release(tmp_path), "ted2")
    report = json.loads(output(study, "--json"))
    assert report["coefficients"]["gwet_ac1"]["value"] is not None  # the case exercises the coefficients
    assert report["span_agreement"] is not None
    check("mqm_overlap.json", normalised(output(study, "--json")))
    check("mqm_overlap.txt", output(study))
    check("mqm_overlap_z_spam_kept.json", normalised(output(study, "--json", "--ranking-order", "z", "--spam", "keep",
                                                            "--bootstrap", "200", "--seed", "7")))


def normalised(text: str) -> str:
    """The JSON report with the import's time (``facts.collection.imported_at``) fixed and the file read
    (``facts.collection.file``) named without its directory (the checkout's place)."""
    report = json.loads(text)
    collection = report.get("facts", {}).get("collection") or {}
    if collection.get("imported_at"):
        collection["imported_at"] = "(import time)"
    if collection.get("file"):
        collection["file"] = Path(collection["file"]).name
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("build", [ranking_study, choice_study])
def test_ranking_and_choice_exports(build, tmp_path):
    """A ranking and a choice study, from a fixed export file (a study built through the services answers in an
    order that varies between runs, and the bootstrap follows that order): the report of the file, and of the
    study imported from it."""
    name = build.__name__.removesuffix("_study")
    export = GOLDEN / f"{name}_export.csv"
    if os.environ.get("AGREEMENT_GOLDEN_WRITE") == "1":
        call_command("export_judgments", build().slug, "--output", str(export), stderr=io.StringIO())
    out = io.StringIO()
    call_command("agreement", judgments=str(export), json=True, stdout=out)
    check(f"{name}_file.json", normalised(out.getvalue()))
    call_command("import_judgments", str(export), "--format", "export", "--slug", f"{name}-again",
                 stdout=io.StringIO())
    again = Study.objects.get(slug=f"{name}-again")
    # The import creates the file's annotators in an order of its own: number them by the file's names instead.
    for n, annotator in enumerate(again.annotators.order_by("external_id"), start=1):
        Annotator.objects.filter(pk=annotator.pk).update(code=f"b{n:08d}")
    check(f"{name}_imported.json", normalised(output(again, "--json")))
