"""What a protocol is: everything that differs between the ways annotators answer.

A protocol app subclasses :class:`ProtocolSpec`, fills in what its protocol
does differently, and registers one instance (``protocols.registry.register``)
in its ``AppConfig.ready()``. The defaults here are those of a protocol with
one answer per item and no spans or scores; each method says who calls it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from protocols.parts.pages import PagesRules
from protocols.parts.quality import QualityRules
from protocols.parts.reports import ReportsRules
from protocols.parts.transfer import TransferRules

if TYPE_CHECKING:
    from studies.definition.prefill import Shown
    from studies.models import Candidate, Study


class ProtocolSpec(PagesRules, TransferRules, ReportsRules, QualityRules):
    #: The name stored in ``Study.protocol`` and written in study files.
    name: ClassVar[str] = ""
    #: One line for forms, the admin and ``manage.py protocols``.
    label: ClassVar[str] = ""
    #: The top-level fields of an answer (the annotation API's ``POST`` body, besides client times).
    answer_fields: ClassVar[tuple[str, ...]] = ()
    #: The JSON Schema of an answer body (``manage.py protocols --json``, docs/annotation-api.md).
    answer_schema: ClassVar[dict[str, Any]] = {}
    #: The JSON Schema of the protocol's own settings in a study file (docs/study-file.md).
    settings_schema: ClassVar[dict[str, Any]] = {}
    #: How many candidates an item may have: (at least, at most; None = no limit).
    candidates_per_item: ClassVar[tuple[int, int | None]] = (2, None)
    #: The severities a study's error spans may be named with (() where answers have no spans).
    allowed_severities: ClassVar[tuple[str, ...]] = ()
    #: Answers are per-candidate annotations (error spans and/or a 0-100 score), as in MQM, ESA and DA.
    per_candidate_annotations: ClassVar[bool] = False
    #: Answer fields a payload may carry besides :attr:`answer_fields` (the fates of suggestions: ESA, MQM).
    extra_answer_fields: ClassVar[tuple[str, ...]] = ()
    #: An answer orders the item's candidates (:meth:`preference_values`): adaptive allocation observes, per pair
    #: of candidates, which one the annotator preferred.
    preference_observations: ClassVar[bool] = False

    # --- what a study of this protocol is (studies.models.Study) ---------------------------------

    def uses_spans(self, study: Study) -> bool:
        """Annotators mark error spans."""
        return False

    def uses_score(self, study: Study) -> bool:
        """Annotators give each candidate a 0-100 score."""
        return False

    def taxonomy(self, study: Study) -> list[dict[str, Any]]:
        """The error categories annotators choose from ([] when spans carry no category)."""
        return []

    def severities(self, study: Study) -> list[str]:
        """The severities a span may have ([] when the protocol has no spans)."""
        return []

    def source_spans_allowed(self, study: Study) -> bool:
        """Whether an error span may point into the source text (only where annotators see it)."""
        return False

    def study_errors(self, study: Study) -> dict[str, list[str]]:
        """Problems of a study's settings for this protocol (``Study.clean``), by field."""
        return {}

    def prefill_problem(self, study: Study) -> str | None:
        """Why this study cannot show automatic error spans as suggestions (``import_prefill``), or None."""
        return f"a {self.name} study takes no suggested error spans (ESA and MQM studies do)."

    def answer_with_suggestions(self, study: Study, *, shown: Shown | None, candidates: dict[str, Candidate],
                                payload: dict[str, Any], answer: dict[str, Any],
                                errors: dict[str, list[str]]) -> dict[str, Any]:
        """The answer with the fates of the suggestions the annotator saw (``shown``: None when the study has
        none, else whether the item is assisted and its suggestions); problems by field."""
        return answer

    def settings_errors(self, values: Any) -> list[str]:
        """Problems of ``Study.protocol_settings`` against :attr:`settings_schema`, each naming its setting.

        A protocol without settings of its own takes an empty object.
        """
        import jsonschema  # here, not at start-up: every process imports this module, few validate settings

        schema = self.settings_schema or {"type": "object", "maxProperties": 0}
        validator = jsonschema.Draft202012Validator(schema)
        problems = []
        for error in sorted(validator.iter_errors(values), key=lambda e: list(e.absolute_path)):
            where = ".".join(str(p) for p in error.absolute_path)
            if error.validator == "maxProperties" and not self.settings_schema:
                problems.append(f"the {self.name} protocol has no settings of its own (got {', '.join(sorted(values))}).")
            elif error.validator == "additionalProperties":
                known = ", ".join(sorted(schema.get("properties", {}))) or "none"
                problems.append(f"{error.message} (settings of {self.name}: {known}).")
            else:
                problems.append(f"{where + ': ' if where else ''}{error.message}")
        return problems

    def setting(self, study: Study, name: str) -> Any:
        """A setting of :attr:`settings_schema` for a study: its stored value, else the schema's default."""
        if name in (study.protocol_settings or {}):
            return study.protocol_settings[name]
        return self.settings_schema.get("properties", {}).get(name, {}).get("default")

    # --- answers (annotation.handout.answers.judgment_validate) ------------------------------------

    def validate_answer(self, study: Study, *, item_source: str, candidates: dict[str, Candidate],
                        payload: dict[str, Any], errors: dict[str, list[str]]) -> dict[str, Any] | None:
        """The stored form of an answer, or None with the problems added to ``errors`` by field.

        ``candidates`` maps the public ids the annotator saw to the item's candidates;
        ``payload`` holds at least one of :attr:`answer_fields`.
        """
        raise NotImplementedError(f"{type(self).__name__} does not check answers")

    def demo_studies(self) -> list[Callable[[], dict[str, Any]]]:
        """Builders of the study files ``load_demo`` adds for this protocol (the built-in protocols' demo
        studies are listed in studies/demo/studies.py)."""
        return []

    def preference_values(self, answer: dict[str, Any], keys: list[str]) -> dict[str, float]:
        """A stored answer as one value per candidate of the item (``keys``: the candidates' ids as text), a
        higher value for a preferred candidate; only the order matters (evaluators.live_allocation, where
        :attr:`preference_observations`). Candidates the answer does not order are left out."""
        return {}

    def describe(self) -> dict[str, Any]:
        """What ``manage.py protocols --json`` prints for this protocol."""
        return {"name": self.name, "label": self.label, "answer_fields": list(self.answer_fields),
                "per_candidate_annotations": self.per_candidate_annotations,
                "settings_schema": self.settings_schema, "answer_schema": self.answer_schema}
