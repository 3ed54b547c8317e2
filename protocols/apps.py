from django.apps import AppConfig


class ProtocolsConfig(AppConfig):
    """The registry's own app: the ``protocols`` management command."""

    name = "protocols"
    verbose_name = "Annotation protocols"
