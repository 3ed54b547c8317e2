"""The mqm protocol: what the annotator's pages and the API show for an item of the protocol (annotation.pages, annotation.items)."""
from __future__ import annotations

from protocols.parts.pages import PagesRules


class MqmPages(PagesRules):
    pass
