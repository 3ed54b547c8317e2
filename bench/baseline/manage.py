#!/usr/bin/env python
"""manage.py of the load benchmark's baseline project (see baseline_project/settings.py)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "baseline_project.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
