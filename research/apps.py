from django.apps import AppConfig


class ResearchConfig(AppConfig):
    """The researcher's web pages and API: they combine studies, annotation and evaluators."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "research"
