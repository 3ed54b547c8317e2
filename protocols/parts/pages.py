"""What the annotator's pages and the API show for an item of the protocol (annotation.pages, annotation.items)."""
from __future__ import annotations

from typing import ClassVar


class PagesRules:
    name: ClassVar[str] = ""
