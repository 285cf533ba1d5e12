# One virtual environment for everything; `make demo` and `make test` set it up on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-fast fuzz bench bench-quick clean

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

# fresh randomness and a larger budget (not run in CI): the property tests with ten times the
# examples, then the differential sweeps on new seeds for FUZZ_MINUTES; prints how to reproduce
ifndef SEED
SEED := $(shell $(PYTHON) -c "import random; print(random.SystemRandom().randrange(2**32))")
endif
FUZZ_MINUTES ?= 10
fuzz: $(VENV)/.installed
	@echo "fuzz seed $(SEED): reproduce with  make fuzz SEED=$(SEED)"
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q -p no:cacheprovider -m "not slow" --hypothesis-seed=$(SEED) \
		--deselect tests/test_notebooks.py tests; status=$$?; \
	$(PY) -m tests.fuzz --seed $(SEED) --minutes $(FUZZ_MINUTES) || status=1; \
	echo "fuzz seed $(SEED): reproduce with  make fuzz SEED=$(SEED)"; exit $$status

# every benchmark suite, then report.md, plots and raw JSON in .benchmarks/<UTC time>/ (and a copy
# in .benchmarks/latest/); bench-quick is CI's smoke test (small sizes, under 3 minutes)
bench: $(VENV)/.installed
	$(PY) bench/run.py

bench-quick: $(VENV)/.installed
	$(PY) bench/run.py --quick

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .benchmarks
