from django.apps import AppConfig


class MqmConfig(AppConfig):
    name = "protocols.mqm"
    label = "protocols_mqm"
    verbose_name = "MQM protocol"

    def ready(self) -> None:
        from protocols.mqm.protocol import Mqm  # the spec imports the apps' models: only once apps are ready
        from protocols.registry import register
        register(Mqm())
