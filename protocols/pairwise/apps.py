from django.apps import AppConfig


class PairwiseConfig(AppConfig):
    name = "protocols.pairwise"
    label = "protocols_pairwise"
    verbose_name = "Pairwise protocol"

    def ready(self) -> None:
        from protocols.pairwise.protocol import Pairwise  # the spec imports the apps' models: only once apps are ready
        from protocols.registry import register
        register(Pairwise())
