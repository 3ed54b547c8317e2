# The two commands: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/postgres

.PHONY: demo test test-sqlite test-postgres test-browser browser bench lint typecheck clean

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PIP) install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

demo: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py load_demo --base-url http://127.0.0.1:$(PORT)
	$(PY) manage.py runserver 127.0.0.1:$(PORT)

# Browser tests need Debian's chromium; installed when missing and apt is there.
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
	  (apt-get install -y chromium >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y chromium >/dev/null 2>&1)) ; } || true
	@command -v chromium >/dev/null 2>&1 && echo "browser: $$(command -v chromium)" || echo "browser: chromium not available"

test: $(VENV)/.installed-dev browser
	$(PY) -m mypy
	$(PY) -m pytest -q
	@if [ -n "$$DATABASE_URL" ] || $(PY) -c "import psycopg,sys; psycopg.connect('$(PG_URL)', connect_timeout=3).close()" 2>/dev/null; then \
	  echo "== again on PostgreSQL"; \
	  DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(PY) -m pytest -q -m "not browser"; \
	else echo "== PostgreSQL not reachable: PostgreSQL pass skipped"; \
	  if [ "$$CI" = "true" ]; then echo "PostgreSQL is required under CI=true"; exit 1; fi; fi

# Type checking (mypy.ini: django-stubs and DRF plugins, pandas-stubs).
typecheck: $(VENV)/.installed-dev
	$(PY) -m mypy

bench: $(VENV)/.installed-dev
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) db.sqlite3 screenshots
