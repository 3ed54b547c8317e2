"""Forms of the comparison page (run registry evaluators, upload a score file, pick comparison options), of the
planning page and of the import page's item selection."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django import forms

from django.core.validators import MaxValueValidator, RegexValidator

from evaluators.metrics.registry import evaluators as registered_evaluators
from evaluators.stats.planning import DEFAULT_POWER, MAX_ITEMS, MIN_ITEMS
from evaluators.comparison.core import HUMAN_SCORES
from evaluators.stats.selection import METHODS, SIMILARITIES
from evaluators.study_selection import BUILT_IN_METRICS

MAX_UPLOAD_BYTES = 20 * 1024 * 1024


def _evaluator_choices() -> list[tuple[str, str]]:
    return [(name, f"{name} — {spec.description}") for name, spec in sorted(registered_evaluators().items())]


class EvaluatorRunForm(forms.Form):
    evaluators = forms.MultipleChoiceField(
        choices=_evaluator_choices, widget=forms.CheckboxSelectMultiple, help_text="Evaluators to (re)compute.")
    nlp = forms.CharField(
        required=False, max_length=200, label="Language backend",
        validators=[RegexValidator(r"^(lexicon|spacy:[A-Za-z0-9_.\-]+)$",
                                   "Give lexicon or spacy:PIPELINE (an installed spaCy pipeline).")],
        help_text=("Blank: each evaluator's default (lexicon). spacy:PIPELINE for an installed spaCy pipeline, "
                   "which blonde, dblonde and blonde-plus need."))
    paired = forms.ChoiceField(
        choices=[("bs", "paired bootstrap (1,000 resamples)"), ("ar", "approximate randomisation (10,000 trials)"),
                 ("none", "none")], initial="bs", required=False, label="Paired test",
        help_text="sacrebleu's paired test of every system against the first (bleu, chrf, ter).")
    reference = forms.ChoiceField(
        choices=[("", "the study's reference")], required=False, label="Reference",
        help_text="The reference to score against when items have several: bleu, chrf and ter use all of them by "
                  "default, the other evaluators need one (the others are then scored like systems).")

    def __init__(self, *args: Any, references: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["reference"]
        assert isinstance(field, forms.ChoiceField)
        if len(references) > 1:
            field.choices = [("", f"all references ({', '.join(references)}): bleu, chrf, ter only")] + [
                (r, r) for r in references]
        else:
            field.choices = [("", f"the study's reference ({references[0]})" if references else "none")] + [
                (r, r) for r in references]

    def clean(self):  # noqa: ANN201 - Django's hook
        """BlonDe proper (blonde, dblonde, blonde-plus) needs a spaCy pipeline: refused here rather than in the job."""
        data = super().clean() or {}
        nlp = data.get("nlp") or ""
        if "nlp" in self.errors or nlp.startswith("spacy:"):
            return data
        registry = registered_evaluators()
        needing = [n for n in data.get("evaluators") or [] if getattr(registry.get(n), "needs_spacy", False)]
        if needing:
            lex = [f"{n}-lex" for n in needing if f"{n}-lex" in registry]
            self.add_error("nlp", f"{', '.join(needing)} need{'s' if len(needing) == 1 else ''} a spaCy pipeline: "
                           "give spacy:PIPELINE here (an installed pipeline, e.g. spacy:en_core_web_sm; see "
                           "docs/evaluators.md, 'The BlonDe family')"
                           + (f", or pick {', '.join(lex)}, the lexicon-backend approximation" if lex else "") + ".")
        return data


class ScoreImportForm(forms.Form):
    file = forms.FileField(help_text="CSV/TSV or JSON Lines: item, system, score, optional document, name, higher_is_better.")
    name = forms.CharField(required=False, max_length=100, help_text="Metric name (if the file has no name column).")
    orientation = forms.ChoiceField(choices=[("", "from the file"), ("higher", "higher is better"),
                                             ("lower", "lower is better")], required=False)

    def clean_file(self):  # noqa: ANN201 - Django's hook
        upload = self.cleaned_data["file"]
        if upload.size > MAX_UPLOAD_BYTES:
            raise forms.ValidationError(f"The file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.")
        try:
            return upload.name, upload.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise forms.ValidationError(f"Not UTF-8 text ({exc.reason} at byte {exc.start}).") from None

    def higher_is_better(self) -> bool | None:
        return {"higher": True, "lower": False}.get(self.cleaned_data.get("orientation") or "")


class CompareOptionsForm(forms.Form):
    """Query options shared by the page and the API (bad values are reported per field)."""
    human_score = forms.ChoiceField(choices=[(s, s) for s in HUMAN_SCORES], required=False)
    bootstrap = forms.IntegerField(min_value=1, max_value=10_000, required=False)
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1, required=False)  # numpy's seed range
    #: One of the study's references (checked against the study by the view); blank: all of them stay references.
    reference = forms.CharField(required=False, max_length=100)

    def options(self) -> dict:
        data = self.cleaned_data
        options = {"human_score": data.get("human_score") or "expected_wins",
                   "n_boot": data.get("bootstrap") or 1000,
                   "seed": data.get("seed") if data.get("seed") is not None else 0}
        if data.get("reference"):
            options["reference"] = data["reference"]
        return options


class PlanForm(forms.Form):
    """The planning page's query (``plan_study``'s options); the pair's systems are checked against the pilot."""

    items = forms.IntegerField(min_value=MIN_ITEMS, max_value=MAX_ITEMS, required=False,
                               help_text="Items of the planned study.")
    raters_per_item = forms.IntegerField(min_value=1, max_value=100, required=False, initial=1)
    systems = forms.IntegerField(min_value=2, required=False, help_text="The pilot's N best systems (blank: all).")
    pair_a = forms.ChoiceField(required=False, label="Pair: system A")
    pair_b = forms.ChoiceField(required=False, label="system B")
    power = forms.FloatField(min_value=0.01, max_value=0.99, required=False, initial=DEFAULT_POWER)
    seconds_per_judgment = forms.FloatField(min_value=0.1, max_value=86_400, required=False,
                                            help_text="Blank: the pilot's median server time.")

    def __init__(self, *args: Any, systems: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", "—")] + [(s, s) for s in systems]
        for name in ("pair_a", "pair_b"):
            cast(forms.ChoiceField, self.fields[name]).choices = choices
        self.fields["systems"].validators.append(MaxValueValidator(len(systems)))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        a, b = data.get("pair_a"), data.get("pair_b")
        if bool(a) != bool(b):
            self.add_error("pair_b" if a else "pair_a", "Choose both systems of the pair, or neither.")
        elif a and a == b:
            self.add_error("pair_b", "Choose two different systems.")
        if not self.errors and data.get("items") is None and not a:
            self.add_error("items", "Give the planned number of items, or a pair to size the study for.")
        return data


class ItemSelectionForm(forms.Form):
    """The import page's optional "Select items": a method, its metric, a budget (docs/efficient-evaluation.md)."""

    select_method = forms.ChoiceField(
        label="Select items", required=False,
        choices=[("", "No: every item of the file"), *((m, m) for m in METHODS)],
        help_text="Create the study on the most useful items only (subset2evaluate's methods; Zouhar et al., 2025).")
    select_metric = forms.CharField(
        label="Metric", required=False, max_length=200,
        help_text=f"metric_avg/var/cons: a scorer of the score file, or {', '.join(BUILT_IN_METRICS)} computed "
                  f"against each item's reference. diversity: the similarity ({', '.join(SIMILARITIES)}; blank: "
                  "unigram). random: blank.")
    select_budget = forms.CharField(label="Budget", required=False, max_length=20,
                                    help_text="N items, or P% of them (rounded down).")
    select_seed = forms.IntegerField(label="Seed", required=False, min_value=0, max_value=2 ** 63 - 1, initial=0,
                                     help_text="random: the seed (blank: 0).")
    scores_file = forms.FileField(label="Score file (optional)", required=False,
                                  help_text="Long CSV system,segment,scorer,score: segments are the study file's item "
                                            "ids, systems its candidates' systems.")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("select_method"):
            for name in ("select_metric", "select_budget", "scores_file"):
                if data.get(name):
                    self.add_error(name, "Only with a selection method.")
        elif not data.get("select_budget"):
            self.add_error("select_budget", "A selection needs a budget: N items or P%.")
        return data
