#!/usr/bin/env bash
# Runs gpuctl's benchmarks (decoding, validation, parsers, generation) with
# memory statistics. Compare two runs with benchstat:
#   bench/run.sh > old.txt; (change); bench/run.sh > new.txt; benchstat old.txt new.txt
set -euo pipefail
cd "$(dirname "$0")/.."
CGO_ENABLED=0 go test -run '^$' -bench . -benchmem -count "${COUNT:-5}" ./internal/...
