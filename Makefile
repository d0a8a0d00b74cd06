# Set-up is idempotent: the venv is rebuilt only when requirements.txt changes.
PYTHON ?= python3.11
VENV := .venv
STAMP := $(VENV)/.requirements.sha256
export TF_CPP_MIN_LOG_LEVEL ?= 2

.PHONY: setup test quickstart bench clean-venv

setup: $(STAMP)

$(STAMP): requirements.txt
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	@if [ -f $(STAMP) ] && sha256sum -c --status $(STAMP) 2>/dev/null; then \
	  echo "environment up to date"; \
	else \
	  $(VENV)/bin/python -m pip install -q --upgrade pip && \
	  $(VENV)/bin/python -m pip install -q -r requirements.txt && \
	  sha256sum requirements.txt > $(STAMP); \
	fi

# The test suite (README's second command; .ci/run calls this).
test: setup
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider tests

# The main job on an embedded default problem: datagen, train, average, decode, BLEU.
quickstart: setup
	$(VENV)/bin/python bin/t2t-quickstart

clean-venv:
	rm -rf $(VENV)
