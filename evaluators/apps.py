from django.apps import AppConfig


class EvaluatorsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evaluators"
    verbose_name = "Evaluators"

    def ready(self) -> None:
        # The hand-out (annotation) may not import evaluators: it calls the refresher it is given here after
        # each judgment of an adaptive study (annotation/handout/allocation.py).
        from annotation.handout.allocation import register_refresher  # imports models: only once apps are ready
        from evaluators.live_allocation import allocation_refresh_after_judgment

        register_refresher(allocation_refresh_after_judgment)
