from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from annotation.api import schema# noqa: F401  (registers the OpenAPI token scheme)
