#!/usr/bin/env bash
# e2e.sh - end-to-end tests of `gpuctl accept`, `gpuctl plan` and the objects of `gpuctl generate` (a
# server-side dry run of each, test/e2e/generated_test.go) against a real control plane on loopback:
# etcd + kube-apiserver + kube-controller-manager (Job controller, GC) + kwok fake GPU nodes that serve
# corpus outputs as the probe pods' logs. Runs `go test -tags e2e ./test/e2e/`.
#
# Usage: hack/e2e.sh [go test flags...]      (from anywhere; the repository root is found from this file)
# Env:   BIN_DIR  where the control-plane binaries are cached (default $HOME/.cache/gpuctl/k8s-bin);
#                 built by hack/k8s/build-bins.sh when missing (14 min cold on 2 cores with an empty Go cache, 2026-12-03)
#        KEEP=1   keep the state directory (logs, kubeconfig) after the run
#        GPUCTL_ARTIFACTS  where the fleet test writes the screenshot of its report
# Needs: a headless Chromium (Debian: apt-get install -y chromium; .ci/run installs it): the fleet test
# opens its `gpuctl report` page in it and fails without one.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BIN_DIR=${BIN_DIR:-$HOME/.cache/gpuctl/k8s-bin}
T0=$(date +%s)

"$ROOT/hack/k8s/build-bins.sh" "$BIN_DIR"

STATE=$(mktemp -d "${TMPDIR:-/tmp}/gpuctl-e2e.XXXXXX")
cleanup() {
  "$ROOT/hack/k8s/down.sh" "$STATE" >/dev/null 2>&1 || true
  if [[ ${KEEP:-0} == 1 ]]; then echo "e2e: state kept in $STATE"; else rm -rf "$STATE"; fi
}
trap cleanup EXIT

# Free loopback ports: other engineers may run a control plane on the defaults.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
BASE=0
for _ in $(seq 1 50); do
  b=$(( 21000 + (RANDOM % 400) * 10 ))
  ok=1; for i in 0 1 2 3 4 5; do port_free $((b + i)) || ok=0; done
  if [[ $ok == 1 ]]; then BASE=$b; break; fi
done
[[ $BASE != 0 ]] || { echo "e2e: no free loopback ports" >&2; exit 1; }
export ETCD_PORT=$BASE ETCD_PEER_PORT=$((BASE + 1)) API_PORT=$((BASE + 2)) KCM_PORT=$((BASE + 3)) KWOK_PORT=$((BASE + 4)) SCHED_PORT=$((BASE + 5))

# The probe pods' logs: CRI-format copies of corpus outputs of one 8x H100 node (driver 535.161.08,
# CUDA 12.2; outputs that do not contradict each other) and of an A10 with a row remap pending.
LOGS=$STATE/cri-logs
mkdir -p "$LOGS"
crif() { awk '{ sub(/\r$/, ""); printf "2026-01-01T00:00:00.000000000Z stdout F %s\n", $0 }' "$1" > "$LOGS/$2"; }
cri() { crif "$ROOT/testdata/corpus/$1" "$2"; }
cri nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08.txt h100-x8-smi-q.log
cri topo/h100-x8-8nic-sglang-checkenv-570.txt h100-x8-topo.log
cri cuda-samples/vectoradd-pass-cuda12.5.txt vectoradd-pass.log
cri nccl-tests/h100-x8-allreduce-g8-256M-2G-noindent-rows.txt h100-x8-allreduce.log
cri nvidia-smi/a10-x1-q-535.129.03.txt a10-x1-smi-q-row-remap.log
# A real 2-node x 8 GPU all_reduce_perf output: what every nccl-multi rank pod prints (kwok runs no process).
# ... with the line NCCL prints when it uses GPUDirect-TCPX (testdata/derived/README.md): the nodes are a3-highgpu-8g.
crif "$ROOT"/testdata/derived/nccl-tests/a100-40g-2node-16gpu-allreduce-10G-roce-net-gpudirecttcpx.txt allreduce-2node-16gpu.log
# nvidia-smi -L and nvlink -s of 8x H100 SXM nodes (probe's testdata: the corpus has none for H100).
crif "$ROOT"/internal/probe/testdata/nvidia-smi/list-L-h100-80gb-hbm3-x8.txt h100-x8-smi-list.log
crif "$ROOT"/internal/probe/testdata/nvidia-smi/nvlink-s-h100-80gb-hbm3-x8-550.90.07.txt h100-x8-smi-nvlink.log
crif "$ROOT"/internal/probe/testdata/nvidia-smi/nvlink-s-v100-inactive-links.txt nvlink-inactive.log
# The same H100 node's all_reduce 20 % slower (testdata/derived/README.md): the history test.
crif "$ROOT"/testdata/derived/nccl-tests/h100-x8-allreduce-g8-256M-2G-busbw-x0.8.txt h100-x8-allreduce-slow.log
# The 8x H100 node with GPU 3's row remap pending (testdata/derived/README.md): the FAIL record test.
crif "$ROOT"/testdata/derived/nvidia-smi/h100-80gb-hbm3-x8-q-535.161.08-gpu3-row-remap-pending.txt h100-x8-smi-q-gpu3-remap.log
# The framework checks of a 2-GPU node, ok and with a corrupt checkpoint (testdata/derived/README.md).
crif "$ROOT"/testdata/derived/framework/2ranks-torch-1.13-ok-as-cuda.log framework-ok.log
crif "$ROOT"/testdata/derived/framework/2ranks-torch-1.13-corrupt-checkpoint-as-cuda.log framework-corrupt.log
sed "s#__LOGS__#$LOGS#g" hack/e2e/kwok.yaml > "$STATE/kwok-config.yaml"

# An audit log of the requests of the plan test's read-only identity (and nobody else's): the proof
# that `gpuctl plan --kubeconfig` makes no write request (test/e2e/plan_test.go).
cat > "$STATE/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["system:serviceaccount:e2e-plan:plan-reader"]
- level: None
EOF
export APISERVER_EXTRA_ARGS="${APISERVER_EXTRA_ARGS:-} --audit-policy-file=$STATE/audit-policy.yaml --audit-log-path=$STATE/audit.log"

# The scheduler places the nccl-multi rank pods (node affinity, one per node); the other probe pods
# name their node (spec.nodeName) and bypass it.
WITH_SCHEDULER=1 BIN_DIR=$BIN_DIR KWOK_CONFIG=$STATE/kwok-config.yaml "$ROOT/hack/k8s/up.sh" "$STATE"
T1=$(date +%s)

set +e
E2E_STATE=$STATE E2E_AUDIT_LOG=$STATE/audit.log KUBECONFIG=$STATE/kubeconfig go test -tags e2e -count=1 -v "$@" ./test/e2e/ 2>&1 | tee "$STATE/go-test.log"
rc=${PIPESTATUS[0]}
set -e
echo "e2e: control plane up in $((T1 - T0))s, tests took $(( $(date +%s) - T1 ))s, exit $rc"
exit "$rc"
