# dockrecon set-up, demo, tests and benchmarks. Every target creates .venv when it is absent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT := out

.PHONY: demo test test-slow bench venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## demo: run the main job on a shipped sample; output under out/
demo: $(STAMP)
	mkdir -p $(OUT)
	$(BIN)/dockrecon identify hysteresis \
	    telemetry_samples/static/lateral_double_loop.csv \
	    --element telemetry_samples/static/lateral_double_loop.start.toml \
	    --output $(OUT)/hysteresis_lateral.json --plot $(OUT)/hysteresis_lateral.png
	@echo "demo output written to $(OUT)/"

## test: the default suite (slow studies excluded)
test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -n 2 -q

## test-slow: the long studies only
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow -q

## bench: speed benchmarks; figures recorded in benchmarks/results/
bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache
