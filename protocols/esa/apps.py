from django.apps import AppConfig


class EsaConfig(AppConfig):
    name = "protocols.esa"
    label = "protocols_esa"
    verbose_name = "ESA protocol"

    def ready(self) -> None:
        from protocols.esa.protocol import Esa  # the spec imports the apps' models: only once apps are ready
        from protocols.registry import register
        register(Esa())
