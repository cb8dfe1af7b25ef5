#!/usr/bin/env bash
# Scale benchmark: CPU time (user + system) and peak RSS of `gpuctl validate`
# and `gpuctl generate all` on generated GKE specs with 10, 100, 1,000 and
# 10,000 node pools (bench/genspec), measured with GNU time. Prints a
# Markdown table (the README's "Performance" section) and the ratio
# CPU(10,000) / CPU(1,000), which the budget holds at 12 or less.
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
declare -A cpu
for n in ${POOLS:-10 100 1000 10000}; do
	"$tmp/genspec" "$n" > "$tmp/p$n.yaml"
	read -r vc vm < <(measure "$tmp/gpuctl" validate --as-of 2026-11-29 "$tmp/p$n.yaml")
	rm -rf "$tmp/out"
	read -r gc gm < <(measure "$tmp/gpuctl" generate all --as-of 2026-11-29 "$tmp/p$n.yaml" --out "$tmp/out")
	cpu[$n]=$(awk -v a="$vc" -v b="$gc" 'BEGIN{print a + b}')
	printf '| %d | %d | %.2f | %d | %.2f | %d |\n' "$n" $(( $(wc -c < "$tmp/p$n.yaml") / 1024 )) "$vc" $((vm / 1024)) "$gc" $((gm / 1024))
done
if [ -n "${cpu[1000]:-}" ] && [ -n "${cpu[10000]:-}" ]; then
	awk -v a="${cpu[10000]}" -v b="${cpu[1000]}" 'BEGIN{printf "\nCPU(10,000) / CPU(1,000), validate + generate all: %.1f\n", a / b}'
fi
