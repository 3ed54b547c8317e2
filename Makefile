# The two commands: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/postgres

.PHONY: axe spansbench demo test test-sqlite test-postgres test-browser browser messages makemessages bench loadtest crowdbench cluster hotpath lint lint-imports typecheck clean

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PIP) install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# The key of local runs (demo, tests, mypy's Django plugin): random, written once, git-ignored.
# config/settings.py reads it when SECRET_KEY is unset and refuses to start without a key (docs/deploy.md).
.secret_key:
	@umask 077; $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(50))" > $@.tmp && mv $@.tmp $@

demo: $(VENV)/.installed .secret_key messages
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py load_demo --base-url http://127.0.0.1:$(PORT)
	@# A task worker beside the server runs the evaluators queued from the compare page (docs/deploy.md).
	$(PY) manage.py db_worker --no-reload & worker=$$!; trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	  $(PY) manage.py runserver 127.0.0.1:$(PORT)

# Browser tests need Debian's chromium; installed when missing and apt is there.
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
	  (apt-get install -y chromium >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y chromium >/dev/null 2>&1)) ; } || true
	@command -v chromium >/dev/null 2>&1 && echo "browser: $$(command -v chromium)" || echo "browser: chromium not available"

# Annotator interface translations: locale/*/LC_MESSAGES/django.po (in git) compiled to .mo
# (not in git) by msgfmt, from Debian's gettext, installed when missing and apt is there.
messages: $(VENV)/.installed .secret_key
	@command -v msgfmt >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
	  (apt-get install -y gettext >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y gettext >/dev/null 2>&1)) ; } || true
	@command -v msgfmt >/dev/null 2>&1 || { echo "msgfmt not found: install GNU gettext (Debian: apt-get install gettext)"; exit 1; }
	$(PY) manage.py compilemessages --ignore=.venv --ignore=node_modules --verbosity 0

# After changing annotator strings: refresh the .po files, translate the new entries, then make messages.
makemessages: $(VENV)/.installed .secret_key
	$(PY) manage.py makemessages -l fr -l de -l es -l zh_Hans -l ar --no-location \
	  --ignore=.venv --ignore=bench --ignore=tests --ignore=staticfiles --ignore=screenshots


# axe-core (npm, pinned in tests/browser/package-lock.json) for the accessibility browser tests.
AXE := tests/browser/node_modules/axe-core/axe.min.js
$(AXE): tests/browser/package.json tests/browser/package-lock.json
	cd tests/browser && npm ci --no-audit --no-fund --silent
	touch $@

axe: $(AXE)

test: $(VENV)/.installed-dev .secret_key browser messages $(AXE)
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q
	@if [ -n "$$DATABASE_URL" ] || $(PY) -c "import psycopg,sys; psycopg.connect('$(PG_URL)', connect_timeout=3).close()" 2>/dev/null; then \
	  echo "== again on PostgreSQL"; \
	  DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(PY) -m pytest -q -m "not browser"; \
	else echo "== PostgreSQL not reachable: PostgreSQL pass skipped"; \
	  if [ "$$CI" = "true" ]; then echo "PostgreSQL is required under CI=true"; exit 1; fi; fi

# The layout's import contracts (.importlinter, docs/architecture.md).
lint-imports: $(VENV)/.installed-dev
	$(VENV)/bin/lint-imports

# Type checking (mypy.ini: django-stubs and DRF plugins, pandas-stubs).
typecheck: $(VENV)/.installed-dev .secret_key
	$(PY) -m mypy

bench: $(VENV)/.installed-dev .secret_key
	$(PY) bench/run.py
	$(PY) bench/meta_speed.py
	$(PY) bench/evaluators_speed.py
	$(PY) bench/score_speed.py
	$(PY) bench/ud_tagger.py evaluate en fixtures/ud/en_ewt-ud-test.sample.conllu --speed --min-speed 10000

# Load benchmark (docs/load.md): gunicorn + a throwaway PostgreSQL cluster + asyncio clients.
# make loadtest ITEMS=100000 | FAULT=kill-worker | FAULT=stop-db | EXPLAIN=1 | PROFILE=1
ITEMS ?= 2000
CLIENTS ?= 100
DURATION ?= 30
WORKERS ?= 4
THREADS ?= 1
FAULT ?= none
loadtest: $(VENV)/.installed-dev .secret_key
	$(PY) bench/loadtest.py --items $(ITEMS) --clients $(CLIENTS) --duration $(DURATION) \
	  --workers $(WORKERS) --threads $(THREADS) --fault $(FAULT) $(if $(EXPLAIN),--explain,) $(if $(PROFILE),--profile,) $(LOADTEST_ARGS)

# Open-loop crowd benchmark (docs/load.md): N annotators, next -> think Exp(10 s) -> submit -> pause Exp(2 s).
# make crowdbench N=2000 [DURATION=60] [WORKERS=5] [THREADS=1] [WORKER_CLASS=sync|gthread] [EXPLAIN=1] [PROFILE=1]
# DURATION, WORKERS and THREADS are passed on only when given (their defaults above are loadtest's).
N ?= 2000
given = $(filter command line environment environment override override,$(origin $(1)))
crowdbench: $(VENV)/.installed-dev .secret_key
	$(PY) bench/crowdbench.py --annotators $(N) $(if $(call given,DURATION),--duration $(DURATION),) \
	  $(if $(call given,WORKERS),--workers $(WORKERS),) $(if $(call given,THREADS),--threads $(THREADS),) \
	  $(if $(WORKER_CLASS),--worker-class $(WORKER_CLASS),) $(if $(EXPLAIN),--explain,) $(if $(PROFILE),--profile,) \
	  $(CROWDBENCH_ARGS)

# Two app servers, two rq task workers, one PostgreSQL, one Redis on this machine; the crowd through both
# servers with a task worker killed and an app server restarted mid-run (docs/deploy.md, section 8).
cluster: $(VENV)/.installed-dev .secret_key
	$(PY) bench/cluster.py --annotators $(if $(call given,N),$(N),300) $(if $(call given,DURATION),--duration $(DURATION),) \
	  $(CLUSTER_ARGS)

# Main-thread long tasks and slowest event handler while marking spans in a long document (figures, not a test)
spansbench: $(VENV)/.installed-dev .secret_key browser messages
	$(PY) -m pytest bench/spans_page.py -p tests.browser.conftest -q -s

# CPU and statements per judgment, one client at a time, in process (docs/load.md)
hotpath: $(VENV)/.installed-dev .secret_key
	$(PY) bench/hotpath_cpu.py $(HOTPATH_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 screenshots
