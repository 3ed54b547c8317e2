"""A small judged study for the report tests, built only through the services.

Answers are crafted per (item, annotator) from a seeded generator, so the
study has ties, disagreements, spam items and a reference that usually wins,
and is the same on SQLite and PostgreSQL.
"""
from __future__ import annotations

import random
from typing import Any

from annotation.models import Annotator
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import Study
from tests.factories import make_study

# Rank patterns over (reference, sys1, sys2): 1 = best; equal ranks are ties.
RANK_PATTERNS = [(1, 2, 3), (1, 2, 3), (1, 3, 2), (1, 2, 2), (2, 1, 3), (1, 1, 2), (1, 2, 3), (2, 2, 1), (1, 1, 1)]
CHOICES = ["reference", "reference", "reference", "sys1", "tie", "neither", "invalid"]


def answer_all(study: Study, annotators: list[Annotator]) -> int:
    """Every annotator judges until nothing is left; returns the number of judgments."""
    n = 0
    for annotator in annotators:
        while (assignment := assignment_next(annotator=annotator)) is not None:
            item = assignment.item
            cands = {c.system: c for c in item.candidates.all()}
            rng = random.Random(f"{item.external_id}:{annotator.sequence}")
            payload: dict[str, Any]
            if study.protocol == "ranking":
                pattern = rng.choice(RANK_PATTERNS)
                ranks = {cands[s].public_id: r for s, r in zip(["reference", "sys1", "sys2"], pattern)}
                spam = [c for c in cands.values() if c.is_spam]
                if spam:  # a careful annotator puts the scrambled candidate last
                    ranks[spam[0].public_id] = 3
                payload = {"ranks": ranks}
            elif study.protocol == "choice":
                pick = rng.choice(CHOICES)
                payload = {"choice": cands[pick].public_id if pick in cands else pick}
            else:
                payload = {"label": rng.choice(study.labels)}
            judgment_submit(assignment=assignment, payload=payload)
            n += 1
    return n


def ranking_study(slug: str = "rk", *, n_items: int = 12, n_annotators: int = 3) -> Study:
    """A ranking study with ties allowed, two phenomena, spam items, every item judged by 3."""
    study = make_study(slug=slug, protocol="ranking", n_items=n_items, n_candidates=3,
                       phenomena=("it-sie", "it-er"),
                       settings={"allow_ties": True, "redundancy": n_annotators, "spam_rate": 0.2})
    answer_all(study, annotators_create(study=study, count=n_annotators))
    return study


def choice_study(slug: str = "ch", *, n_items: int = 12) -> Study:
    """A connective-preference-like choice study: reference vs one system, with every option."""
    study = make_study(slug=slug, protocol="choice", n_items=n_items, n_candidates=2,
                       phenomena=("but", "however"),
                       settings={"options": ["neither", "tie", "invalid"], "redundancy": 3, "spam_rate": 0.0})
    answer_all(study, annotators_create(study=study, count=3))
    return study


#: The facts a study's judgments carry wherever they are read from (an export file, an imported copy); the others
#: (how the judgments were collected, the study's settings) belong to the stored study (evaluators/reports/facts.py).
DATA_FACTS = ("n_annotators", "n_excluded", "raters_per_segment", "raters_per_item", "raters_per_document", "n_items",
              "systems", "references")


def report_numbers(report: dict) -> dict:
    """The report with ``facts`` cut down to :data:`DATA_FACTS` and the count of timed judgments."""
    facts = report["facts"]
    timing = facts["recorded"]["timing"]
    kept = {**{k: facts[k] for k in DATA_FACTS}, "n_timed": None if timing is None else timing["n_timed"]}
    return {**report, "facts": kept}
