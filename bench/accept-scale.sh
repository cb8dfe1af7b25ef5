#!/usr/bin/env bash
# accept-scale.sh - scale benchmark of `gpuctl accept`: starts a local control plane (etcd, kube-apiserver
# with an audit log, kube-controller-manager, kwok) as hack/e2e.sh does, creates 50, 200 (and, with
# SIZES=50,200,500, 500) fake 8-GPU nodes and accepts them all (STAGES, by default the five node-local default stages; kwok serves an
# 8x H100 node's outputs), printing a markdown table: wall time, the slowest node, the time of
# one node alone, API requests per node-stage (audit events with gpuctl's user agent) and gpuctl's peak RSS.
#
# Usage: bench/accept-scale.sh            Env: SIZES (default 50,200), PARALLEL (default 100),
#        STAGES (gpuctl --stages, default kubernetes,inventory,topology,cuda,nccl: every node-local default stage),
#        BIN_DIR (control-plane binaries, default $HOME/.cache/gpuctl/k8s-bin), KEEP=1 keeps the state,
#        KCM_QPS: the controller manager's --kube-api-qps (burst twice that); unset, client-go's 20 (burst 30),
#        at which the Job controller is the bottleneck of a large fleet (see docs/accept.md, "Performance at fleet scale").
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN_DIR=${BIN_DIR:-$HOME/.cache/gpuctl/k8s-bin}
SIZES=${SIZES:-50,200}
STAGES=${STAGES:-kubernetes,inventory,topology,cuda,nccl}
PARALLEL=${PARALLEL:-100}
KCM_QPS=${KCM_QPS:-}
KCM_LIMIT="20/30 (default)"
if [[ -n $KCM_QPS ]]; then
  KCM_EXTRA_ARGS="--kube-api-qps=$KCM_QPS --kube-api-burst=$((2 * KCM_QPS)) ${KCM_EXTRA_ARGS:-}"
  KCM_LIMIT="$KCM_QPS/$((2 * KCM_QPS))"
fi
export KCM_EXTRA_ARGS
"$ROOT/hack/k8s/build-bins.sh" "$BIN_DIR"

STATE=$(mktemp -d "${TMPDIR:-/tmp}/gpuctl-bench.XXXXXX")
cleanup() {
  "$ROOT/hack/k8s/down.sh" "$STATE" >/dev/null 2>&1 || true
  if [[ ${KEEP:-0} == 1 ]]; then echo "bench: state kept in $STATE" >&2; else rm -rf "$STATE"; fi
}
trap cleanup EXIT

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
BASE=0
for _ in $(seq 1 50); do
  b=$(( 25000 + (RANDOM % 400) * 10 ))
  ok=1; for i in 0 1 2 3 4 5; do port_free $((b + i)) || ok=0; done
  if [[ $ok == 1 ]]; then BASE=$b; break; fi
done
[[ $BASE != 0 ]] || { echo "bench: no free loopback ports" >&2; exit 1; }
export ETCD_PORT=$BASE ETCD_PEER_PORT=$((BASE + 1)) API_PORT=$((BASE + 2)) KCM_PORT=$((BASE + 3)) KWOK_PORT=$((BASE + 4)) SCHED_PORT=$((BASE + 5))

LOGS=$STATE/cri-logs
mkdir -p "$LOGS"
crif() { awk '{ sub(/\r$/, ""); printf "2026-01-01T00:00:00.000000000Z stdout F %s\n", $0 }' "$1" > "$LOGS/$2"; }
crif testdata/corpus/nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt h100-x8-smi-q.log
crif internal/probe/testdata/nvidia-smi/list-L-h100-80gb-hbm3-x8.txt h100-x8-smi-list.log
crif internal/probe/testdata/nvidia-smi/nvlink-s-h100-80gb-hbm3-x8-550.90.07.txt h100-x8-smi-nvlink.log
crif testdata/corpus/topo/h100-x8-8nic-sglang-checkenv-570.txt h100-x8-topo.log
crif testdata/corpus/cuda-samples/vectoradd-pass-cuda12.5.txt vectoradd-pass.log
crif testdata/corpus/nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt h100-x8-allreduce.log
for f in a10-x1-smi-q-row-remap; do : > "$LOGS/$f.log"; done
crif internal/probe/testdata/nvidia-smi/nvlink-s-v100-inactive-links.txt nvlink-inactive.log
sed "s#__LOGS__#$LOGS#g" hack/e2e/kwok.yaml > "$STATE/kwok-config.yaml"

cat > "$STATE/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
POLICY
APISERVER_EXTRA_ARGS="--audit-policy-file=$STATE/audit-policy.yaml --audit-log-path=$STATE/audit.log --audit-log-maxsize=0" \
  BIN_DIR=$BIN_DIR KWOK_CONFIG=$STATE/kwok-config.yaml "$ROOT/hack/k8s/up.sh" "$STATE" >&2

go build -o "$STATE/gpuctl" ./cmd/gpuctl
go build -o "$STATE/acceptscale" ./bench/acceptscale
KUBECONFIG=$STATE/kubeconfig "$STATE/acceptscale" -gpuctl "$STATE/gpuctl" -audit "$STATE/audit.log" -nodes "$SIZES" -parallel "$PARALLEL" -kcm "$KCM_LIMIT" -stages "$STAGES"
