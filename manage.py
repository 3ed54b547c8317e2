#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""
import gc
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    finally:
        # The interpreter's exit runs the garbage collector over every object still alive: after a report
        # command (Django, pandas, SciPy and the study's rows loaded) that took 0.3-0.45 s of a 2-s `agreement`
        # (docs/reports.md, "The interpreter's exit"). Frozen, those objects are still freed as the modules are
        # cleared, and atexit handlers (logging's flush, temporary files) still run; only the collector's passes
        # over them are skipped.
        gc.freeze()


if __name__ == "__main__":
    main()
