"""What `evaluate` loads before its evaluators run (no pandas/SciPy/irrCAC for its system checks, no spaCy for
lemminflect) and how many processes it uses by default.

The import checks run in a fresh interpreter (the test process has imported everything already).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["running", "better", "was", "mice", "geese", "talks", "translated", "quickly", "data", "left"]


def _python(code: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_evaluates_system_checks_leave_out_the_url_checks_and_import_no_pandas() -> None:
    code = ("import json, sys, django; django.setup()\n"
            "from django.core.management import load_command_class\n"
            "command = load_command_class('evaluators', 'evaluate')\n"
            "messages = command.check(tags=command.requires_system_checks, display_num_errors=False)\n"
            "print(json.dumps({'tags': list(command.requires_system_checks),\n"
            "                  'loaded': [m for m in ('pandas', 'scipy', 'irrCAC') if m in sys.modules]}))")
    out = _python(code)
    assert "urls" not in out["tags"]
    assert {"models", "admin", "templates"} <= set(out["tags"])  # every other check still runs
    assert out["loaded"] == []


def test_lemminflect_is_loaded_without_spacy_and_reads_the_same() -> None:
    lookup = ("from evaluators.metrics.language import lexicon_backend as lb\n"
              f"readings = {{w: lb._en_readings(w) for w in {WORDS!r}}}\n"
              "inflections = {w: lb._en_inflections(w, 'VERB') for w in ('run', 'be', 'translate')}\n")
    alone = _python("import json, sys\n" + lookup +
                    "print(json.dumps({'spacy': 'spacy' in sys.modules, 'finder_left': any(type(f).__name__ == '_NoSpacy' for f in sys.meta_path),\n"
                    "                  'r': readings, 'i': inflections}))")
    with_spacy = _python("import json, sys, spacy\n" + lookup +
                         "import lemminflect\n"
                         "print(json.dumps({'hooked': spacy.tokens.Token.has_extension('lemma'),\n"
                         "                  'r': readings, 'i': inflections}))")
    assert alone["spacy"] is False
    assert alone["finder_left"] is False  # the finder that hid spaCy was removed
    assert alone["r"] == with_spacy["r"] and alone["i"] == with_spacy["i"]
    assert alone["r"]["mice"] == {"NOUN": ["mouse"]}
    assert with_spacy["hooked"] is True  # spaCy loaded first: lemminflect hooks into it as usual


def test_evaluate_runs_in_one_process_unless_asked_for_two() -> None:
    from evaluators.management.commands.evaluate import Command

    parser = Command().create_parser("manage.py", "evaluate")
    assert parser.parse_args(["s", "--evaluator", "bleu"]).processes == 1  # the least CPU (docs/evaluators.md)
    assert parser.parse_args(["s", "--evaluator", "bleu", "--processes", "2"]).processes == 2


def test_setup_leaves_drf_spectacular_out_and_a_schema_built_later_still_has_the_token_scheme() -> None:
    code = ("import json, sys, django; django.setup()\n"
            "loaded = 'drf_spectacular.extensions' in sys.modules\n"
            "from drf_spectacular.generators import SchemaGenerator\n"
            "schema = SchemaGenerator().get_schema(request=None, public=True)\n"
            "print(json.dumps({'loaded_at_setup': loaded,\n"
            "                  'schemes': sorted(schema['components'].get('securitySchemes', {}))}))")
    out = _python(code)
    assert out["loaded_at_setup"] is False
    assert "annotatorToken" in out["schemes"]
