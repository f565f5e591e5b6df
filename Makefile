# dockrecon set-up, demo, tests and benchmarks. Every target creates .venv when it is absent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT := out
# settings of the demo reconstruction that finish in a few minutes on 2 cores
DEMO_RECON_OPTS ?= --no-mcmc --seed 1

.PHONY: demo test test-slow bench docs venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## demo: the post-flight reconstruction of the shipped nominal flight, ending in its report
## (out/nominal/report.html, report.pdf), after a static hysteresis-test identification
demo: $(STAMP)
	mkdir -p $(OUT)
	$(BIN)/dockrecon identify hysteresis \
	    telemetry_samples/static/lateral_double_loop.csv \
	    --element telemetry_samples/static/lateral_double_loop.start.toml \
	    --output $(OUT)/hysteresis_lateral.json --plot $(OUT)/hysteresis_lateral.png
	$(BIN)/dockrecon reconstruct telemetry_samples/flights/nominal.parquet \
	    --scenario models/probe_cone/presets/reference.toml \
	    --config telemetry_samples/flights/run.toml \
	    --output $(OUT)/nominal $(DEMO_RECON_OPTS)
	@echo "demo output written to $(OUT)/ (report: $(OUT)/nominal/report.html, report.pdf)"

## test: the default suite and the slow tests that guard the shipped flights (marker shipped)
test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow or shipped" -n 2 -q

## test-slow: the long studies only
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow -q

## bench: speed benchmarks; figures recorded in benchmarks/results/
bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

## docs: the documentation site (Sphinx, warnings are errors) into docs/_build/html; the
## worked examples (docs/examples/plot_*.py) run during the build
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache docs/_build docs/auto_examples docs/api/generated
