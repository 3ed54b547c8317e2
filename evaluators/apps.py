from django.apps import AppConfig


class EvaluatorsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evaluators"
    verbose_name = "Evaluators"
