from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"
    verbose_name = "Annotation"
    # The OpenAPI token scheme (annotation.api.schema) is registered by annotation/api/urls.py, which every schema
    # is built from: importing it here put drf-spectacular's import (~0.5 s of CPU) in every process's start-up.
