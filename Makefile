# steward — see README.md. The two commands: `make run` and `make test`.
SHELL := /bin/bash
TEMPORAL_CLI_VERSION := v1.5.1
WORKFLOWCHECK_VERSION := v0.6.0
BIN := $(CURDIR)/bin
TEMPORAL := $(BIN)/temporal
GO_PACKAGES := ./...

.PHONY: run test test-browser test-package dist fuzz build bench soak vet lint clean temporal-cli cluster

## run: build everything, start the dev server (Web UI), a worker and the demo tree
run: build temporal-cli
	@./scripts/run.sh

## cluster: a Temporal server on this machine's PostgreSQL (scripts/cluster.sh; docs/cluster.md); Ctrl-C takes it down
cluster: build temporal-cli
	@./scripts/cluster.sh up --foreground

## test: vet, workflowcheck, and every test (unit, workflow, integration) with coverage
# The race detector needs cgo and a C compiler (gcc is on the machines we
# run on); without one, make test says so and runs without it.
RACE := $(shell command -v "$$(go env CC)" >/dev/null 2>&1 && echo -race)

# The integration package runs its suite in one binary: 16 min on this
# 2-core machine (CI of 2026-11-25), so its timeout leaves room for a
# slower one; the whole of make test stays well under 30 minutes.
test: build temporal-cli lint
	@[ -n "$(RACE)" ] || echo "make test: no C compiler ($$(go env CC)): running without -race"
	STEWARD_TEMPORAL_BIN=$(TEMPORAL) STEWARD_REQUIRE_INTEGRATION=1 STEWARD_RACE=$(RACE) \
		go test $(RACE) -count=1 -timeout 35m -cover $(GO_PACKAGES)
	cd third_party/temporal-sdk-go && go test $(RACE) -count=1 -run '^TestStewardPatch' ./internal
	cd tools/dist && go test -count=1 ./...

## fuzz: every fuzz target in turn, FUZZTIME each (default 2m): the spec parser, and the workflows' signals and Updates (seeds run in `make test`)
# go test fuzzes one target per invocation: each package's targets are
# listed (go test -list) and run one after the other. A failure stops the
# run; its input is in the package's testdata/fuzz/FuzzXxx/ (a seed from
# then on). FUZZTIME takes go's -fuzztime forms: 2m, 30s, 10000x.
# FUZZMINIMIZETIME bounds the minimizing of each new input (go's default,
# 60s, would hold a worker a minute for every input that finds new code in
# the workflows, whose executions take milliseconds each).
FUZZTIME ?= 2m
FUZZMINIMIZETIME ?= 1s
FUZZ_PACKAGES := ./internal/spec ./workflows
fuzz:
	@set -eo pipefail; for pkg in $(FUZZ_PACKAGES); do \
		targets=$$(go test -list '^Fuzz' $$pkg | grep '^Fuzz'); \
		for t in $$targets; do \
			echo "go test $$pkg -run '^$$' -fuzz '^$$t\$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME)"; \
			go test $$pkg -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME); \
		done; \
	done

## dist: the packages, into dist/: a .deb, an .rpm and a tarball (tools/dist, with nfpm; docs/production.md)
dist: build
	cd tools/dist && go run . -root $(CURDIR) -bin $(BIN) -out $(CURDIR)/dist

## test-package: install the .deb for real, check it, purge it (root and dpkg: CI's machine; skips otherwise)
test-package: dist temporal-cli
	@./scripts/test-package.sh

## test-browser: the Web UI in headless Chromium (needs Debian's chromium; not in `make test`)
test-browser: build temporal-cli
	STEWARD_TEMPORAL_BIN=$(TEMPORAL) STEWARD_REQUIRE_INTEGRATION=1 \
		go test -count=1 -tags browser -run Browser -v ./integration

## bench: steward beside raw Temporal on its own dev server (table + bench/<timestamp>.json), then the Go micro-benchmarks
bench: build temporal-cli
	go run ./bench -temporal $(TEMPORAL) -worker $(BIN)/worker -starter $(BIN)/starter -out bench/results
	go test -run '^$$' -bench . -benchmem ./internal/... ./workflows

## soak: about a thousand workers for SOAK_DURATION (default 2h) under applies, rollouts, worker kills, host freezes, drains and server restarts (docs/reliability.md)
SOAK_DURATION ?= 2h
soak: build temporal-cli
	go run ./bench -only soak -duration $(SOAK_DURATION) -temporal $(TEMPORAL) -worker $(BIN)/worker -starter $(BIN)/starter -out bench/results

build:
	@mkdir -p $(BIN)
	go build -o $(BIN)/worker ./worker
	go build -o $(BIN)/starter ./starter
	go build -o $(BIN)/hello ./examples/hello

## temporal-cli: the pinned Temporal CLI (dev server + Web UI), built once from its Go module
temporal-cli:
	@if [ ! -x $(TEMPORAL) ]; then \
		echo "Building the Temporal CLI $(TEMPORAL_CLI_VERSION) into bin/temporal: once only, about 3 minutes on 2 cores..."; \
		GOBIN=$(BIN) go install github.com/temporalio/cli/cmd/temporal@$(TEMPORAL_CLI_VERSION) && echo "Temporal CLI built."; \
	fi

lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go' ':!third_party' 2>/dev/null || find . -name '*.go' -not -path './third_party/*'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go' ':!third_party'); exit 1; }
	go run go.temporal.io/sdk/contrib/tools/workflowcheck@$(WORKFLOWCHECK_VERSION) -config workflowcheck.config.yaml ./workflows/...

vet:
	go vet $(GO_PACKAGES)

clean:
	rm -rf $(BIN)/worker $(BIN)/starter .data coverage.out dist
