from django.apps import AppConfig


class RowsConfig(AppConfig):
    name = "rows"
    default_auto_field = "django.db.models.BigAutoField"
