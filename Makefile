# Two commands do all the set-up on a fresh machine (Python 3.11+):
#   make example   runs the nightly job on the bundled example (no cloud account, no API key)
#   make test      runs the tests
VENV ?= .venv
PY := $(VENV)/bin/python
DATE ?= 2026-11-29

.PHONY: example test lint bench compiled test-compiled bench-compiled clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

example: $(VENV)/.installed
	$(VENV)/bin/halluwatch run --config examples/halluwatch.yaml --date $(DATE)

test: $(VENV)/.installed
	$(VENV)/bin/pytest

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: $(VENV)/.installed
	$(PY) bench/parse_throughput.py

# The same tree with the hot modules compiled by mypyc (setup.py, HALLUWATCH_COMPILE=1), as
# infra/Dockerfile builds it: a copy under build/, so the extensions never shadow this checkout's
# sources. Needs a C compiler.
COMPILED := build/compiled
SHARED := $(abspath ..)/shared

compiled:
	rm -rf $(COMPILED) && mkdir -p $(COMPILED)
	tar -c --exclude=./.git --exclude=./build --exclude='./.venv*' --exclude=__pycache__ \
		--exclude='*.so' --exclude=./examples/results --exclude='*.egg-info' . | tar -x -C $(COMPILED)
	python3 -m venv $(COMPILED)/.venv
	$(COMPILED)/.venv/bin/python -m pip install --quiet --upgrade pip
	cd $(COMPILED) && HALLUWATCH_COMPILE=1 .venv/bin/python -m pip install --quiet -e '.[test]'
	cd $(COMPILED) && .venv/bin/python -c 'import sys, detectors.action_claims as m; \
		sys.exit(0 if m.__file__.endswith(".so") else "not compiled: " + m.__file__)'

test-compiled: compiled
	cd $(COMPILED) && HALLUWATCH_SHARED=$(SHARED) .venv/bin/pytest

bench-compiled: compiled
	cd $(COMPILED) && .venv/bin/python bench/code_checks.py --corpus $(SHARED)/corpus

clean:
	rm -rf $(VENV) examples/results build *.so detectors/*.so sessions/*.so sessions/formats/*.so
