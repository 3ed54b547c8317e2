from django.apps import AppConfig


class ChoiceConfig(AppConfig):
    name = "protocols.choice"
    label = "protocols_choice"
    verbose_name = "Choice protocol"

    def ready(self) -> None:
        from protocols.choice.protocol import Choice  # the spec imports the apps' models: only once apps are ready
        from protocols.registry import register
        register(Choice())
