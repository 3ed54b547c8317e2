from django.apps import AppConfig


class RankingConfig(AppConfig):
    name = "protocols.ranking"
    label = "protocols_ranking"
    verbose_name = "Ranking protocol"

    def ready(self) -> None:
        from protocols.ranking.protocol import Ranking  # the spec imports the apps' models: only once apps are ready
        from protocols.registry import register
        register(Ranking())
