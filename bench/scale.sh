#!/usr/bin/env bash
# Scale benchmark: CPU time (user + system) and peak RSS of `gpuctl validate`
# and `gpuctl generate all` on generated GKE specs with 10, 100, 1,000 and
# 10,000 node pools (bench/genspec), measured with GNU time. Prints a
# Markdown table (docs/performance.md), the budget line at 1,000 pools
# (validate + generate all within 1 s of CPU, each under 150 MB at the peak)
# and the ratio CPU(10,000) / CPU(1,000), which the budget holds at 12 or less.
#   bench/scale.sh            # POOLS="10 100 1000 10000" by default
set -euo pipefail
cd "$(dirname "$0")/.."
TIME=${TIME:-/usr/bin/time}
[ -x "$TIME" ] || { echo "bench/scale.sh: needs GNU time at $TIME" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$tmp/gpuctl" ./cmd/gpuctl
CGO_ENABLED=0 go build -o "$tmp/genspec" ./bench/genspec
measure() { # prints "cpu_seconds peak_kib"
	"$TIME" -f '%U %S %M' -o "$tmp/t" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
	awk '{printf "%.3f %d\n", $1 + $2, $3}' "$tmp/t"
}
echo "| pools | spec KiB | validate CPU s | validate peak MiB | generate all CPU s | generate all peak MiB |"
echo "|---:|---:|---:|---:|---:|---:|"
declare -A cpu peak
for n in ${POOLS:-10 100 1000 10000}; do
	"$tmp/genspec" "$n" > "$tmp/p$n.yaml"
	read -r vc vm < <(measure "$tmp/gpuctl" validate --as-of 2026-11-29 "$tmp/p$n.yaml")
	rm -rf "$tmp/out"
	read -r gc gm < <(measure "$tmp/gpuctl" generate all --as-of 2026-11-29 "$tmp/p$n.yaml" --out "$tmp/out")
	cpu[$n]=$(awk -v a="$vc" -v b="$gc" 'BEGIN{print a + b}')
	peak[$n]=$(( (vm > gm ? vm : gm) / 1024 ))
	printf '| %d | %d | %.2f | %d | %.2f | %d |\n' "$n" $(( $(wc -c < "$tmp/p$n.yaml") / 1024 )) "$vc" $((vm / 1024)) "$gc" $((gm / 1024))
done
if [ -n "${cpu[1000]:-}" ]; then
	awk -v c="${cpu[1000]}" -v m="${peak[1000]}" 'BEGIN{printf "\n1,000 pools: validate + generate all %.2f s of CPU (budget 1 s), peak %d MiB (budget 150 MB = 143 MiB): %s\n", c, m, (c <= 1 && m <= 143) ? "within budget" : "OVER BUDGET"}'
fi
if [ -n "${cpu[1000]:-}" ] && [ -n "${cpu[10000]:-}" ]; then
	awk -v a="${cpu[10000]}" -v b="${cpu[1000]}" 'BEGIN{printf "\nCPU(10,000) / CPU(1,000), validate + generate all: %.1f\n", a / b}'
fi
