from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.apps import AppConfig

if TYPE_CHECKING:
    from studies.models import Study


def _allocation_refresh(study: Study, judgment_id: int) -> dict[str, Any] | None:
    """``evaluators.live_allocation.allocation_refresh_after_judgment``, imported on the first adaptive judgment.

    Importing it at start-up pulled the statistics core (pandas, SciPy, irrCAC: ~0.8 s of CPU) into every
    process and command, most of which never hand out an adaptive study's work.
    """
    from evaluators.live_allocation import allocation_refresh_after_judgment

    return allocation_refresh_after_judgment(study, judgment_id)


class EvaluatorsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evaluators"
    verbose_name = "Evaluators"

    def ready(self) -> None:
        # The hand-out (annotation) may not import evaluators: it calls the refresher it is given here after
        # each judgment of an adaptive study (annotation/handout/allocation.py).
        from annotation.handout.allocation import register_refresher  # imports models: only once apps are ready

        register_refresher(_allocation_refresh)
