"""An ESA pilot study with known scores and answer times, for the planning command and page."""
from __future__ import annotations

from annotation.models import Judgment
from studies.importing.study_file import study_import
from studies.models import Study
from tests.span_study import answer_all
from tests.factories import study_file

#: Server seconds of every judgment; each judgment rates the item's three candidates.
JUDGMENT_SECONDS = 30


def esa_score(k: int, item: str, system: str) -> int:
    """reference ≫ sys1 > sys2 (close), varying with the item and the annotator."""
    i = int(item.split("-")[1])
    return {"reference": 80, "sys1": 50, "sys2": 48}[system] + (i * 7) % 11 - 5 + (3 if k else -3) * (i % 2)


def esa_pilot_study(slug: str = "pilot", n_items: int = 12) -> Study:
    """Two annotators score every item (ESA); every judgment took :data:`JUDGMENT_SECONDS` server seconds."""
    study = study_import(status="open", data=study_file(slug=slug, protocol="esa", n_items=n_items, n_candidates=3,
                                                        settings={"redundancy": 2}))
    answer_all(study, lambda k, item, system: {"spans": [], "score": esa_score(k, item, system)})
    Judgment.objects.filter(assignment__item__study=study).update(duration_ms=JUDGMENT_SECONDS * 1000)
    return study
