# One virtual environment for everything; `make demo` and `make test` set it up on first use,
# with the exact versions of requirements/dev.lock (every transitive dependency pinned).
# `make test-latest` and `make test-oldest` run the same suite in venvs of their own, on the
# newest release of every dependency and on the floors pyproject declares; run both before
# `make lock`, which regenerates the lock from pyproject's ranges.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
UV_VERSION := 0.13.9
LOCK := requirements/dev.lock
BUILD_LOCK := requirements/build.lock
PYTEST_ALL := -m pytest -q --doctest-modules prune_engine tests

.PHONY: demo test test-fast test-latest test-oldest lock fuzz bench bench-quick notebooks clean

# a venv with uv in it (uv is only the installer; the project never imports it)
define make_venv
	rm -rf $(1)
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install -q uv==$(UV_VERSION)
endef

$(VENV)/.installed: $(LOCK) $(BUILD_LOCK) pyproject.toml
	$(call make_venv,$(VENV))
	$(VENV)/bin/uv pip install -q --python $(PY) -r $(LOCK)
	$(VENV)/bin/uv pip install -q --python $(PY) --build-constraint $(BUILD_LOCK) --no-deps -e .
	touch $@

demo: $(VENV)/.installed
	$(PY) -m prune_engine.cli demo
	$(PY) -m prune_engine.cli spark-demo

# the whole suite, including the seeded soundness sweeps and the notebooks (what CI runs)
test: $(VENV)/.installed
	$(PY) $(PYTEST_ALL)

# the quick loop: no slow sweeps
test-fast: $(VENV)/.installed
	$(PY) -m pytest -q -m "not slow" tests

# the newest release of every dependency today, no lock (a fresh venv every time)
test-latest:
	$(call make_venv,.venv-latest)
	.venv-latest/bin/uv pip install -q --python .venv-latest/bin/python --refresh -e ".[dev]"
	.venv-latest/bin/uv pip list --python .venv-latest/bin/python
	.venv-latest/bin/python $(PYTEST_ALL)

# the floors pyproject declares for the library, its spark, delta and iceberg extras and the
# oracle's DuckDB (requirements/floors.py pins them)
test-oldest:
	$(call make_venv,.venv-oldest)
	$(PYTHON) requirements/floors.py > .venv-oldest/floors.txt
	.venv-oldest/bin/uv pip install -q --python .venv-oldest/bin/python -c .venv-oldest/floors.txt -e ".[dev]"
	.venv-oldest/bin/uv pip list --python .venv-oldest/bin/python
	.venv-oldest/bin/python $(PYTEST_ALL)

# regenerate the locks from pyproject's ranges (run test-latest and test-oldest first): the
# development environment, and setuptools for building the project itself
lock:
	$(call make_venv,.venv-lock)
	.venv-lock/bin/uv pip compile -q --python-version 3.11 --extra dev --refresh pyproject.toml -o $(LOCK)
	$(PYTHON) -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires'], sep='\n')" \
		| .venv-lock/bin/uv pip compile -q --python-version 3.11 --refresh - -o $(BUILD_LOCK)
	rm -rf .venv-lock

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

# the corrupt-input fuzzer (tests/corrupt, not run in CI beyond its seeded slice): mutated
# footers, Bloom filters, dictionary pages, Iceberg metadata, saved statistics and n-gram
# indexes, each entry point run in a child process; prints each finding with its replay
MINUTES ?= 5
.PHONY: fuzz-corrupt
fuzz-corrupt: $(VENV)/.installed
	@echo "corrupt-input fuzz seed $(SEED): reproduce with  make fuzz-corrupt SEED=$(SEED) MINUTES=$(MINUTES)"
	$(PY) -m tests.corrupt --seed $(SEED) --minutes $(MINUTES); status=$$?; \
	echo "corrupt-input fuzz seed $(SEED): reproduce with  make fuzz-corrupt SEED=$(SEED) MINUTES=$(MINUTES)"; exit $$status

# every benchmark suite, then report.md, plots and raw JSON in .benchmarks/<UTC time>/ (and a copy
# in .benchmarks/latest/); bench-quick is CI's smoke test (small sizes, under 3 minutes)
bench: $(VENV)/.installed
	$(PY) bench/run.py

bench-quick: $(VENV)/.installed
	$(PY) bench/run.py --quick

# execute every notebook in place and keep its outputs (pictures included), to be committed;
# tests/test_notebooks.py fails on a notebook whose code changed since (about 2 minutes)
notebooks: $(VENV)/.installed
	$(PY) notebooks/execute.py

clean:
	rm -rf $(VENV) .venv-latest .venv-oldest .venv-lock .pytest_cache .hypothesis .benchmarks
