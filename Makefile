# gpuctl — small Makefile; `make test` is what CI runs.
GO        ?= go
BIN       ?= bin/gpuctl
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS   := -s -w -X github.com/gpuctl/gpuctl/internal/cli.Version=$(VERSION)
export CGO_ENABLED ?= 0

.PHONY: build test test-unit test-generate test-nvml test-e2e lint bench demo clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/gpuctl

## test: everything CI runs (unit + CLI scripts, cgo NVML mock tests, end-to-end against a local control plane)
test: test-unit test-generate test-nvml test-e2e

test-unit:
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) test -count=1 ./...

## test-generate: `gpuctl generate all` on the valid examples, then --check on its own output
GEN_EXAMPLES ?= examples/gke-h100-l4.yaml examples/eks-p5-training-efa.yaml
test-generate: build
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for s in $(GEN_EXAMPLES); do \
		$(BIN) generate all $$s --as-of 2026-11-29 --out $$tmp/$$(basename $$s .yaml); \
		$(BIN) generate all $$s --as-of 2026-11-29 --out $$tmp/$$(basename $$s .yaml) --check; \
	done

test-nvml:
	CGO_ENABLED=1 $(GO) test -count=1 -tags nvml ./internal/probe/...

test-e2e:
	./hack/e2e.sh

lint:
	gofmt -l . | tee /dev/stderr | (! read)
	CGO_ENABLED=0 $(GO) vet ./...

bench:
	./bench/run.sh

demo: build
	$(BIN) validate examples/gke-h100-l4.yaml

clean:
	rm -rf bin
