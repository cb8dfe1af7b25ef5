# gpuctl — small Makefile; `make test` is what CI runs.
GO        ?= go
BIN       ?= bin/gpuctl
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
CLI       := github.com/gpuctl/gpuctl/internal/cli
LDFLAGS   := -s -w -X $(CLI).Version=$(VERSION) -X $(CLI).Commit=$(COMMIT) -X $(CLI).BuildDate=$(BUILD_DATE)
export CGO_ENABLED ?= 0
# go-nvml's cgo wrappers call every NVML function, the deprecated ones too: each
# is a compiler warning (about 145 lines) that says nothing about gpuctl.
NVML_CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
# go-nvml leaves NVML's symbols for the dynamic linker to bind when called: a binary
# bound at load (BIND_NOW, what Go's external linker asks for once client-go's cgo is in)
# stops at start with "undefined symbol: nvml...". -z lazy is NVIDIA's own fix, as the
# device plugin builds: https://github.com/NVIDIA/go-nvml/issues/18,
# https://github.com/NVIDIA/k8s-device-plugin/issues/326 (2026-12-03).
NVML_LDFLAGS := -extldflags=-Wl,-z,lazy
# make image: the image's name and the tool that builds it (docker, else podman)
IMAGE     ?= gpuctl:$(VERSION)
CONTAINER ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null)

.PHONY: build build-nvml image docs test test-unit test-fuzz test-generate test-hostile test-nvml test-report test-e2e lint bench demo clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/gpuctl

## build-nvml: a binary with the NVML prober (`gpuctl probe nvml`), for GPU nodes and probe images (cgo)
build-nvml:
	CGO_ENABLED=1 CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) build -trimpath -tags nvml -ldflags '$(LDFLAGS) $(NVML_LDFLAGS)' -o $(BIN)-nvml ./cmd/gpuctl

## image: the gpuctl image (Containerfile: cgo with the NVML prober, distroless base, user 65532, gpuctl at
## /usr/local/bin/gpuctl) as $(IMAGE), with docker or podman (CONTAINER=...); not part of `make test`
image:
	@test -n "$(CONTAINER)" || { echo "image: neither docker nor podman found (set CONTAINER=...)" >&2; exit 2; }
	$(CONTAINER) build -f Containerfile -t $(IMAGE) --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg BUILD_DATE=$(BUILD_DATE) .

## docs: the command reference from the cobra tree, Markdown in docs/ and man pages in docs/man/
## (internal/cli's TestDocsAreCurrent fails when the committed copy is not what this writes)
docs:
	$(GO) run ./cmd/gpuctl docs --out docs

## test: everything CI runs (unit + CLI scripts, cgo NVML mock tests, the report in a browser, end-to-end
## against a local control plane)
test: lint test-unit test-fuzz test-generate test-hostile test-nvml test-report test-e2e

## test-unit: with GPUCTL_REQUIRE_TORCH=1 the framework script's CPU test fails, not skips, without a
## python3 that imports torch (Debian's python3-torch; GPUCTL_PYTHON names another interpreter)
test-unit:
	CGO_ENABLED=0 GPUCTL_REQUIRE_TORCH=1 $(GO) test -count=1 ./...

## test-fuzz: the fuzz targets for a short while each (spec decoding and its safety prescan; decode ->
## generate, whose .tf must parse and whose YAML must hold one mapping per document); a crasher is
## kept under the package's testdata/fuzz/ and runs as a regression test in test-unit from then on
FUZZTIME ?= 10s
test-fuzz:
	CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/spec
	CGO_ENABLED=0 $(GO) test -run '^$$' -fuzz '^FuzzGenerate$$' -fuzztime $(FUZZTIME) ./internal/check

## test-generate: `gpuctl generate all` on every example: a spec that validates generates (and passes
## --check on its own output); one with errors is refused with exit 3 and nothing written
test-generate: build
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for s in examples/*.yaml; do \
		out=$$tmp/$$(basename $$s .yaml); rc=0; \
		$(BIN) validate --as-of 2026-11-29 $$s >/dev/null 2>&1 || rc=$$?; \
		if [ $$rc -eq 0 ]; then \
			$(BIN) generate all $$s --as-of 2026-11-29 --out $$out; \
			$(BIN) generate all $$s --as-of 2026-11-29 --out $$out --check; \
		else \
			grc=0; $(BIN) generate all $$s --as-of 2026-11-29 --out $$out 2>/dev/null || grc=$$?; \
			[ $$grc -eq 3 ] && [ ! -e $$out ] || { echo "$$s: generate exit $$grc, want 3 and no output"; exit 1; }; \
			echo "generate: $$s refused (exit 3), nothing written"; \
		fi; \
	done

## test-hostile: the hostile corpus (test/hostile/cases: Terraform, blueprints, Karpenter YAML, waivers and
## policy files, specs, plan/generate --check trees, records), each case against bin/gpuctl in a child
## process under a 2 GiB address-space limit: exit 2 or 3 with file:line:col or the path, at most 2 s and
## 200 MiB, no runtime trace, no sentinel secret in the output or in a file written
test-hostile: build
	GPUCTL_BIN=$(CURDIR)/$(BIN) CGO_ENABLED=0 $(GO) test -tags hostile -count=1 ./test/hostile

## test-nvml: the NVML prober, and preflight reading through it, against go-nvml's mock servers; needs a
## C compiler (cgo), not a GPU
test-nvml:
	CGO_ENABLED=1 CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) test -count=1 -tags nvml -ldflags '$(NVML_LDFLAGS)' ./internal/probe/...
	CGO_ENABLED=1 CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) test -count=1 -tags nvml -ldflags '$(NVML_LDFLAGS)' -run 'NVML' ./internal/cli

## test-report: gpuctl report's page in headless Chromium (test/browser: DOM against the records, no
## console errors; a screenshot to $$GPUCTL_ARTIFACTS when set). Fails without a Chromium (Debian:
## apt-get install -y chromium; .ci/run installs it); a plain `go test ./...` skips it then, saying so.
test-report:
	GPUCTL_REQUIRE_CHROMIUM=1 CGO_ENABLED=0 $(GO) test -count=1 ./test/browser

## test-e2e: hack/e2e.sh; its fleet test also opens the fleet's report in Chromium (required)
test-e2e:
	./hack/e2e.sh

## lint: gofmt, vet, staticcheck (also the cgo NVML prober, -tags nvml) and the complexity ceiling
## (hack/cyclo.sh: none over 40, those over 15 only as hack/cyclo-allow.txt lists them); staticcheck
## and gocyclo are pinned as tools in go.mod (go tool ...)
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt: not formatted:"; echo "$$out"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet ./...
	CGO_ENABLED=0 $(GO) tool staticcheck ./...
	CGO_ENABLED=1 CGO_CFLAGS='$(NVML_CGO_CFLAGS)' $(GO) tool staticcheck -tags nvml ./internal/probe/...
	./hack/cyclo.sh

bench:
	./bench/run.sh

demo: build
	$(BIN) validate examples/gke-h100-l4.yaml

clean:
	rm -rf bin
