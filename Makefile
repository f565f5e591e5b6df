# dockrecon set-up, demo, tests and benchmarks. Every target creates .venv when it is absent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT := out
# settings of the demo reconstruction that finish in a few minutes on 2 cores
DEMO_RECON_OPTS ?= --mcmc never --seed 1

.PHONY: demo demo-all test test-slow bench bench-readme proposals docs docs-test chromium venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## demo: a static hysteresis-test identification, then the post-flight reconstruction of the
## shipped probe-cone nominal flight, ending in its report (out/nominal/: report.html,
## report.pdf)
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
	@echo "demo output written to $(OUT)/ (report: $(OUT)/nominal/report.html, report.pdf;" \
	      "make demo-all adds the peripheral unit's nominal flight)"

## demo-all: the demo, and the peripheral (androgynous ring) unit's nominal flight too
## (out/peripheral_nominal/)
demo-all: demo
	$(BIN)/dockrecon reconstruct telemetry_samples/flights/peripheral/nominal.parquet \
	    --scenario models/peripheral/presets/reference.toml \
	    --config telemetry_samples/flights/peripheral/run.toml \
	    --output $(OUT)/peripheral_nominal $(DEMO_RECON_OPTS)
	@echo "peripheral demo output written to $(OUT)/peripheral_nominal/"

## test: the default suite and the slow tests that guard the shipped flights (marker shipped)
test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow or shipped" -n 2 -q

## test-slow: the long studies only
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow -q

## bench: the kernel benchmarks (benchmarks/run.py; figures, machine, commit and command in
## benchmarks/results/), then benchmarks/README.md regenerated from the results files
bench: $(STAMP)
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/make_readme.py

## proposals: retrain the learned proposals shipped in recon/proposals/ (recon.amortized),
## seeded; a test fails when a shipped preset or run configuration changed without this.
## The probe-cone unit's (2.5 min on 2 cores; nothing else should run beside it); the
## peripheral unit's is not shipped yet
PROPOSALS := recon/proposals
PROPOSAL_SEED := 1
proposals: $(STAMP)
	rm -f $(PROPOSALS)/*.npz
	$(BIN)/dockrecon train models/probe_cone/presets/reference.toml \
	    --config telemetry_samples/flights/run.toml --seed $(PROPOSAL_SEED) -o $(PROPOSALS)

## bench-readme: only regenerate benchmarks/README.md from benchmarks/results/
bench-readme: $(STAMP)
	$(BIN)/python benchmarks/make_readme.py

## docs: the documentation site (Sphinx, warnings are errors) into docs/_build/html; the
## worked examples (docs/examples/plot_*.py) run during the build
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

## docs-test: build the docs, then open pages of the site and an HTML report in headless
## Chromium (tests/test_docs_browser.py: no console error, every image loaded, no request
## to another host), with the checks of the generated reference (tests/test_docs.py)
docs-test: docs chromium
	$(BIN)/python -m pytest -q tests/test_docs.py tests/test_docs_browser.py

## chromium: Debian's chromium for the browser tests, installed with apt-get when no Chromium
## is on PATH (needs root); when it cannot be, says why and the browser tests skip
CHROMIUM_NAMES := chromium chromium-browser google-chrome google-chrome-stable
chromium:
	@for c in $$DOCKRECON_CHROMIUM $(CHROMIUM_NAMES); do \
	    if command -v $$c >/dev/null 2>&1; then echo "chromium: $$(command -v $$c)"; exit 0; fi; \
	done; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	    echo "chromium: not installed (apt-get as root is needed: apt-get install chromium);" \
	         "the browser tests will be skipped"; exit 0; fi; \
	(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium) \
	    || echo "chromium: apt-get install chromium failed; the browser tests will be skipped"

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache docs/_build docs/auto_examples docs/api/generated
