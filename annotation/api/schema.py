"""OpenAPI schema of the annotation API: the annotator token scheme, JudgmentIn's answer rule, SkipIn's closed body.

Imported by ``annotation/api/urls.py`` (part of the URLs every schema is built from) so drf-spectacular finds the
extension.
"""
from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from protocols.registry import registered


class AnnotatorTokenScheme(OpenApiAuthenticationExtension):
    target_class = "annotation.api.views.AnnotatorTokenAuthentication"
    name = "annotatorToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "The token of the annotator's invitation link: `Token <token>`."}


def judgment_in_requires_an_answer(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Postprocessing hook: JudgmentIn is the answer body of one of the registered protocols (INTERFACES.md)."""
    schemas = result.get("components", {}).get("schemas", {})
    schema = schemas.get("JudgmentIn")
    if schema is not None:
        # Each protocol's answer fields (manage.py protocols --json): a plug-in's own fields join the body.
        properties = schema.setdefault("properties", {})
        required: list[list[str]] = []
        for spec in registered():
            for name, part in spec.answer_schema.get("properties", {}).items():
                properties.setdefault(name, part)
            required += [[name] for name in spec.answer_fields if [name] not in required]
        schema["anyOf"] = [{"required": names} for names in required]
    skip = schemas.get("SkipIn")
    if skip is not None:
        # The skip view names any other field as a 400 (annotation.handout.skips.skip_reason_validate): say so.
        skip["additionalProperties"] = False
    return result
