from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"
    verbose_name = "Annotation"

    # The OpenAPI token scheme (annotation/api/schema.py) is registered where the schema is served, by
    # config/urls.py: importing it here loaded drf-spectacular and DRF (~0.2 s of CPU) into every command.
