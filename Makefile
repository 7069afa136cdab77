# Bursar's build. `make test` is the test command CI runs (.ci/run); `make demo` the main job.
SHELL := /bin/bash
GO ?= go
# NVML (GPU telemetry, go-nvml, cgo) is built only with the nvml tag: a plain `go build` or
# `go install` stays free of go-nvml's cgo deprecation warnings and has no GPU telemetry. make
# builds and tests with it, quietly.
TAGS ?= nvml
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
FUZZTIME ?= 3s
FUZZJOBS ?= 2
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/bursar-dev/bursar/internal/cli.Version=$(VERSION)

.PHONY: all setup build test unit fuzz bench lint demo soak release image clean e2e

all: build

## setup: fetch Go modules and libchdb.so (the embedded ClickHouse engine) into the user cache
setup:
	$(GO) mod download
	bash scripts/setup-chdb.sh

## build: build collector, arbiter, report and soak (the chaos rig, shipped in no release) into ./bin
build:
	$(GO) build -tags "$(TAGS)" -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

## test: the whole suite (unit, integration against real NATS and chDB, a few seconds of each fuzz target)
test: setup unit fuzz

# unit vets and tests in one go command: -vet=all runs every check `go vet` runs, on the same
# packages and their tests, beside the builds and test runs instead of before them (a finding
# fails its package). The packages that take longest are named first so that they start first
# and the rest fill the other CPUs around them, instead of the 12 h soak seed (TestSoakShortSeed)
# starting last and running alone; ./... still tests every package, each once.
SLOWEST ?= ./internal/soak ./internal/arbiter ./internal/jobreplay
unit:
	$(GO) test -tags "$(TAGS)" -vet=all -count=1 -timeout 10m $(SLOWEST) ./...

## fuzz: run every fuzz target for FUZZTIME (default 3s), each package's test binary built once,
## FUZZJOBS packages at a time (default 2)
fuzz:
	FUZZJOBS=$(FUZZJOBS) bash scripts/fuzz.sh $(FUZZTIME)

## e2e: the end-to-end tests (TestE2E…, build tag e2e) against a real etcd, kube-apiserver and
## kube-scheduler, built once by scripts/setup-kube.sh into the user cache (E2E_PKGS narrows them)
# The packages that hold end-to-end tests (files tagged e2e), so that no other test binary is built.
E2E_PKGS ?= $(addprefix ./,$(sort $(dir $(shell grep -rl --include='*_test.go' '^//go:build e2e' cmd deploy e2e internal))))
e2e: setup
	bash scripts/setup-kube.sh
	BURSAR_REQUIRE_KUBE=1 $(GO) test -tags "$(TAGS) e2e" -count=1 -timeout 30m -run E2E $(E2E_PKGS)

## bench: print the benchmark figures the issues ask for, each beside its baseline from the same run
bench: setup
	$(GO) test -run '^$$' -bench PublishToHandler -benchtime 3x ./internal/bus
	$(GO) test -run '^$$' -bench 'PlanFull|ReplanAfterReclaim' -benchtime 20x ./internal/placement
	$(GO) test -run '^$$' -bench PlanQualitySmall -benchtime 1x ./internal/placement
	$(GO) test -run '^$$' -bench PlanServing -benchtime 3x ./internal/placement
	$(GO) test -run '^$$' -bench 'Recorder$$' -benchtime 3x -timeout 20m ./internal/recorder
	$(GO) test -run '^$$' -bench 'ReclaimReaction|Start$$' -benchtime 1x -timeout 20m ./internal/arbiter
	$(GO) test -run '^$$' -bench Reports -benchtime 3x -timeout 30m ./internal/report
	$(GO) test -run '^$$' -bench 'Console$$' -benchtime 5x -timeout 30m ./internal/console
	$(GO) test -run '^$$' -bench Replay -benchtime 1x ./internal/replay
	$(GO) test -run '^$$' -bench Serving -benchtime 1x -timeout 30m ./internal/replay
	$(GO) test -run '^$$' -bench JobsReplay -benchtime 1x -timeout 30m ./internal/jobreplay
	$(GO) test -run '^$$' -bench Anomalies -benchtime 1x -timeout 20m ./internal/anomaly/benchmark
	$(GO) test -run '^$$' -bench Forecast -benchtime 1x -timeout 20m ./internal/forecast/bench
	$(GO) test -run '^$$' -bench 'AWSPriceListBody|SkyPilotMemory' -benchtime 1x ./internal/pricesource

## lint: vet and formatting
lint:
	$(GO) vet -tags "$(TAGS)" ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## demo: the whole system on embedded defaults, replaying a real spot trace
demo: setup build
	./bin/arbiter demo --dir examples/demo

## soak: 72 h of market on a 3-node NATS cluster with two arbiters, the recorder and seeded faults,
## checked for lost or doubled events and actions (SOAK_TRACE, SOAK_MARKET, SOAK_SEED); a 12 h seed
## runs in make test (TestSoakShortSeed)
SOAK_TRACE ?= ../shared/data/traces/skyserve/AWS1
SOAK_MARKET ?= 72h
SOAK_SEED ?= 1
soak: setup build
	@test -d $(SOAK_TRACE) || { echo "soak: no trace at $(SOAK_TRACE) (set SOAK_TRACE to a replay trace folder)"; exit 1; }
	./bin/soak --trace $(SOAK_TRACE) --market $(SOAK_MARKET) --seed $(SOAK_SEED) --report soak-report.md

## release: archives per platform with checksums and an SPDX SBOM each, in dist/; VERSION from the tag
release:
	bash scripts/release.sh $(VERSION) dist

## image: the container image without a daemon or base image (non-root; CHDB=1 adds libchdb.so): dist/image, dist/bursar-image.tar
image:
	bash scripts/image.sh $(VERSION) $(CHDB)

clean:
	rm -rf bin dist
