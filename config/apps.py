"""The project's own app: it holds what wraps every request and needs a table (the rate-limit counters)."""
from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "config"
    label = "config"
    verbose_name = "Project"
    default_auto_field = "django.db.models.BigAutoField"
