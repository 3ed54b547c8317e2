"""``manage.py protocols [--json]``: the registered protocols, their settings and answer schemas."""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from protocols.registry import registered


class Command(BaseCommand):
    help = "List the registered annotation protocols with their settings and answer schemas."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="One JSON object: {\"protocols\": [...]}.")

    def handle(self, *args: Any, **options: Any) -> None:
        specs = registered()
        if options["json"]:
            self.stdout.write(json.dumps({"protocols": [spec.describe() for spec in specs]}, indent=2,
                                         ensure_ascii=False))
            return
        for spec in specs:
            settings = sorted(spec.settings_schema.get("properties", {}))
            self.stdout.write(f"{spec.name:<10} {spec.label}")
            self.stdout.write(f"{'':<10} answer: {' | '.join(spec.answer_fields)}; settings: "
                              f"{', '.join(settings) if settings else 'none of its own'}")
