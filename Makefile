# Two commands do all the set-up on a fresh machine (Python 3.11+):
#   make example   runs the nightly job on the bundled example (no cloud account, no API key)
#   make test      runs the tests
VENV ?= .venv
PY := $(VENV)/bin/python
DATE ?= 2026-11-29

.PHONY: example test lint bench clean

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

clean:
	rm -rf $(VENV) examples/results
