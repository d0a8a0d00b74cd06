# Set-up is idempotent: the venv is rebuilt only when requirements.txt changes, and the project
# is (re)installed into it, editable, only when pyproject.toml or setup.py changes.
# The interpreter .venv is made with: PYTHON=... or else the fastest Python 3.11 on this machine
# (tools/fastest_python.sh says why). An existing .venv keeps its own: `make clean-venv setup`.
PYTHON ?=
VENV := .venv
STAMP := $(VENV)/.requirements.sha256
INSTALLED := $(VENV)/.t2t_repro.installed
export TF_CPP_MIN_LOG_LEVEL ?= 2

.PHONY: setup lint test test-fast test-avx2 test-durations quickstart clean-venv

setup: $(STAMP) $(INSTALLED)

$(STAMP): requirements.txt
	@test -x $(VENV)/bin/python || { \
	  python="$(PYTHON)"; [ -n "$$python" ] || python=$$(sh tools/fastest_python.sh); \
	  echo "making $(VENV) with $$python ($$("$$python" -V 2>&1))"; \
	  "$$python" -m venv $(VENV); \
	}
	@if [ -f $(STAMP) ] && sha256sum -c --status $(STAMP) 2>/dev/null; then \
	  echo "environment up to date"; \
	else \
	  $(VENV)/bin/python -m pip install -q --upgrade pip && \
	  $(VENV)/bin/python -m pip install -q -r requirements.txt && \
	  sha256sum requirements.txt > $(STAMP); \
	fi

# Editable: .venv/bin/t2t-trainer etc. run this checkout's code. The exact pins above are
# already installed, so no dependency is resolved here (--no-deps), and the venv's own
# setuptools builds it (--no-build-isolation: nothing is downloaded).
$(INSTALLED): pyproject.toml setup.py $(STAMP)
	$(VENV)/bin/python -m pip install -q --no-deps --no-build-isolation -e .
	@touch $(INSTALLED)

# Lint and formatting, as pyproject.toml's [tool.ruff] configures them (.ci/run calls this
# first). `.venv/bin/ruff format .` applies the formatting.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The test suite (README's second command; .ci/run calls this). Three test processes on two
# cores (pytest-xdist): each holds a third of what TensorFlow never frees (XLA compiles, loaded
# SavedModels), under 3 GB, and one fills the cores while another waits on a tool it started;
# a process that runs out of tests takes some of another's (worksteal). They start forked from
# the server that also starts the suite's tool runs, which imported TensorFlow once
# (tests/conftest.py, tests/tool_server.py).
TEST_WORKERS ?= 3
PYTEST := $(VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist worksteal
test: setup
	$(PYTEST) tests

# The edit-run loop: everything but the tests marked slow (process-level runs, XLA compiles,
# training; pyproject.toml's markers) in under 2 minutes. CI runs everything.
test-fast: setup
	$(PYTEST) -m "not slow" tests

# The whole suite on the kernels of a CPU without AVX-512 (the AMD EPYC Zen 1 kind), on any
# host: a test's claim must hold on every CPU kind (tests/conftest.py says what it caps).
test-avx2: setup
	T2T_REPRO_TEST_MAX_ISA=AVX2 $(PYTEST) tests

# The whole suite with its 30 slowest tests and the total (the figures quoted for #33).
test-durations: setup
	$(PYTEST) --durations=30 tests

# The main job on an embedded default problem: datagen, train, average, decode, BLEU.
quickstart: setup
	$(VENV)/bin/t2t-quickstart

clean-venv:
	rm -rf $(VENV)
