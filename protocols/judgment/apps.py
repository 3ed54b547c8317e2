from django.apps import AppConfig


class JudgmentConfig(AppConfig):
    name = "protocols.judgment"
    label = "protocols_judgment"
    verbose_name = "Judgment protocol"

    def ready(self) -> None:
        from protocols.judgment.protocol import Judgment  # the spec imports the apps' models: only once apps are ready
        from protocols.registry import register
        register(Judgment())
