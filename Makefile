# One virtual environment for everything; `make demo` and `make test` set it up on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-fast bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

demo: $(VENV)/.installed
	$(PY) -m prune_engine.cli demo
	$(PY) -m prune_engine.cli spark-demo

# the whole suite, including the seeded soundness sweeps and the notebooks (what CI runs)
test: $(VENV)/.installed
	$(PY) -m pytest -q --doctest-modules prune_engine tests

# the quick loop: no slow sweeps
test-fast: $(VENV)/.installed
	$(PY) -m pytest -q -m "not slow" tests

bench: $(VENV)/.installed
	$(PY) -m pytest bench -q --benchmark-json=.benchmarks/latest.json
	$(PY) bench/report.py .benchmarks/latest.json

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .benchmarks
