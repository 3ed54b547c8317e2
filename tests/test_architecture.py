"""The layout's one-way flow, checked two ways: import-linter's contracts and a plain AST walk.

studies <- annotation <- evaluators <- research: a module may import its own app and
the apps below it, never one above. The statistics core (evaluators/stats) imports
no Django at all, so it can be used (and tested) without a configured project.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["studies", "annotation", "evaluators", "research"]  # bottom to top


def _imports(path: Path) -> set[str]:
    """Top-level names of every module imported anywhere in the file (lazy imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _app_modules(app: str) -> list[Path]:
    return [p for p in (ROOT / app).rglob("*.py") if "migrations" not in p.parts]


@pytest.mark.parametrize("app", LAYERS[:-1])
def test_no_app_imports_a_higher_one(app: str) -> None:
    higher = LAYERS[LAYERS.index(app) + 1:]
    offending = sorted(f"{p.relative_to(ROOT)} imports {name}" for p in _app_modules(app) for name in _imports(p)
                       if name.split(".")[0] in higher)
    assert offending == []


def test_statistics_core_imports_no_django() -> None:
    forbidden = {"django", "rest_framework", *LAYERS}
    offending = sorted(f"{p.relative_to(ROOT)} imports {name}"
                       for p in (ROOT / "evaluators" / "stats").rglob("*.py") for name in _imports(p)
                       if name.split(".")[0] in forbidden and not name.startswith("evaluators.stats"))
    assert offending == []


def test_statistics_core_loads_without_django_settings() -> None:
    code = "import sys, evaluators.stats.agreement, evaluators.stats.ranking, evaluators.stats.correlation; " \
           "assert 'django' not in sys.modules, sorted(m for m in sys.modules if m.startswith('django'))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr


def test_import_contracts_hold() -> None:
    """The contracts in .importlinter (layers, pure statistics core, no circles inside an app)."""
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize("app", ["studies", "annotation"])
def test_apps_are_rooms_of_sub_packages_not_flat_lists(app: str) -> None:
    """At most 20 top-level modules: the rest sits in sub-packages named by concern (docs/architecture.md)."""
    modules = sorted(p.name for p in (ROOT / app).glob("*.py"))
    assert len(modules) <= 20, modules
    packages = sorted(p.parent.name for p in (ROOT / app).glob("*/__init__.py")
                      if p.parent.name not in ("migrations", "management"))
    assert len(packages) >= 5, packages


def test_the_readers_and_writers_of_other_tools_formats_import_no_django_and_no_app() -> None:
    offending = sorted(f"{p.relative_to(ROOT)} imports {name}" for p in (ROOT / "formats").rglob("*.py")
                       for name in _imports(p)
                       if name.split(".")[0] in {"django", "rest_framework", "config", *LAYERS})
    assert offending == []


#: A branch on a protocol's name: `protocol == "x"`, `protocol in (...)`, the old `Protocol.X` choices or a list of
#: protocol names. Membership in the registry (`protocol in registry.names()`) asks the registry, so it is not one.
PROTOCOL_BRANCH = re.compile(r"protocol\s*(==|!=)\s*[\"']|protocol\s+(not\s+)?in\s*[(\[{]|\bProtocol\.[A-Z]{2,}\b"
                             r"|SPAN_PROTOCOLS|[\"'](ranking|choice|judgment|mqm|esa|pairwise)[\"']\s*(==|!=)\s*\w*protocol")


def test_core_code_asks_the_protocol_registry_instead_of_branching_on_a_protocols_name() -> None:
    """Outside the protocol packages (and migrations) at most 15 branches on a protocol's name (issue 23)."""
    found = sorted(f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
                   for app in (*LAYERS, "config", "formats") for p in _app_modules(app)
                   for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                   if PROTOCOL_BRANCH.search(line))
    assert len(found) <= 15, "\n".join(found)


#: The same branch in a template: `{% if protocol == "x" %}`, `study.protocol != 'x'`, `protocol in …`.
TEMPLATE_PROTOCOL_BRANCH = re.compile(r"protocol\s*(==|!=)\s*[\"']|protocol\s+(not\s+)?in\s")


def test_shared_templates_include_the_protocols_pieces_instead_of_branching_on_a_protocols_name() -> None:
    """The item, practice, study and report pages name no protocol: its spec names its templates (page_parts)."""
    found = sorted(f"{p.relative_to(ROOT)}:{n}: {line.strip()[:120]}"
                   for p in (ROOT / "templates").rglob("*.html")
                   for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                   if TEMPLATE_PROTOCOL_BRANCH.search(line))
    assert found == []
