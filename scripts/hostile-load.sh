#!/usr/bin/env bash
# hostile-load.sh: neardup serve under hostile clients, on this machine only.
#
# Starts `neardup serve` on 127.0.0.1 (a port of the kernel's choosing) with an open
# files limit of 4096, preloads documents, then measures valid traffic (`neardup bench
# service --mode check`) twice for SECONDS each: alone, and while hostile clients send
#   - JSON nested 2,000,000 levels deep to /v1/check, /v1/documents and
#     /v1/fingerprints/query (4 loops),
#   - 31 MiB bodies to /v1/documents (60 loops, each waiting the 1 s of Retry-After
#     between answers; each body decodes and is then refused for its bad fetch_time),
#   - 1,010 idle connections, opened again every 9 s.
# Meanwhile /healthz is asked every 0.2 s and the server's RSS sampled every 0.2 s. The
# hostile clients run under nice 19: on a machine of a few cores, 65 client processes
# would otherwise take the CPU from the server itself, which remote clients cannot.
# It prints the figures and fails (exit 1) if the server exits, a health check fails,
# RSS passes --memory-limit, or the valid throughput falls under half.
#
# Usage: scripts/hostile-load.sh [SECONDS]   (default 20; about 4 x SECONDS in all)
set -euo pipefail

secs=${1:-20}
memlimit=$((1216 << 20)) # serve's default --memory-limit
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[[ -n ${server:-} ]] && kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "building neardup"
(cd "$root" && go build -o "$tmp/neardup" ./cmd/neardup)
bin=$tmp/neardup

head -c 2000000 /dev/zero | tr '\0' '[' >"$tmp/deep.json"
{
	printf '{"id":"big","text":"'
	(set +o pipefail; yes word | head -c $((31 << 20)) | tr '\n' ' ') # yes ends on SIGPIPE
	printf '","fetch_time":"never"}'
} >"$tmp/big.json"

(
	ulimit -n 4096
	exec "$bin" serve --addr 127.0.0.1:0 --data "$tmp/data" --memory-limit "$memlimit" 2>"$tmp/serve.log"
) &
server=$!
for _ in $(seq 100); do
	addr=$(sed -n 's/.*msg=listening addr=\([0-9.:]*\).*/\1/p' "$tmp/serve.log")
	[[ -n $addr ]] && break
	sleep 0.1
done
[[ -n ${addr:-} ]] || { cat "$tmp/serve.log"; echo "serve did not start" >&2; exit 1; }
base=http://$addr
port=${addr##*:}
until curl -sf "$base/readyz" >/dev/null; do sleep 0.1; done
echo "serve pid $server at $base"

"$bin" bench service --addr "$base" --preload 20000 --start 0 >/dev/null
bench() { # bench LABEL: valid checks for $secs seconds; prints requests/s
	"$bin" bench service --addr "$base" --mode check --start 100000 --clients 8 --pool 40000 \
		--warmup 2s --duration "${secs}s" --json 2>"$tmp/bench-$1.txt" |
		sed -n 's/.*"requests_per_second":\([0-9.]*\).*/\1/p'
}

rss() { awk '/^VmRSS/ {print $2 * 1024}' "/proc/$server/status"; }
hwm() { awk '/^VmHWM/ {print $2 * 1024}' "/proc/$server/status"; }

alone=$(bench alone)
echo "valid checks alone: $alone requests/s"
before=$(hwm)

# The hostile clients, and the probes.
renice -n 19 $$ >/dev/null # the hostile clients below inherit it
for i in 1 2 3 4; do
	(
		paths=(/v1/check /v1/documents /v1/fingerprints/query)
		while :; do
			for p in "${paths[@]}"; do
				curl -s -o /dev/null -w '%{http_code}\n' --max-time 10 --data-binary "@$tmp/deep.json" "$base$p" || echo 000
			done
		done >>"$tmp/deep.codes"
	) &
	pids+=($!)
done
for i in $(seq 60); do
	(
		while :; do
			curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --data-binary "@$tmp/big.json" "$base/v1/documents" || echo 000
			sleep 1
		done >>"$tmp/big.codes"
	) &
	pids+=($!)
done
(
	while :; do
		fds=()
		for i in $(seq 1010); do
			exec {fd}<>"/dev/tcp/127.0.0.1/$port" && fds+=("$fd") || true
		done
		sleep 9
		for fd in "${fds[@]}"; do exec {fd}>&-; done
	done
) &
pids+=($!)
renice -n 0 $$ >/dev/null 2>&1 || true
(
	while :; do
		curl -s -o /dev/null -w '%{http_code}\n' --max-time 2 "$base/healthz" || echo 000
		sleep 0.2
	done >>"$tmp/health.codes"
) &
pids+=($!)
(
	while :; do
		rss >>"$tmp/rss" 2>/dev/null || exit
		sleep 0.2
	done
) &
pids+=($!)

sleep 2
hostile=$(bench hostile)
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()

alive=yes
kill -0 "$server" 2>/dev/null || alive=no
peak=$(sort -n "$tmp/rss" | tail -1)
after=$(hwm 2>/dev/null || echo 0)
counts() { sort "$1" | uniq -c | awk '{printf "%s%s: %d", sep, $2, $1; sep=", "} END {print ""}'; }
health_bad=$(grep -vc '^200$' "$tmp/health.codes" || true)
ratio=$(awk -v a="$alone" -v h="$hostile" 'BEGIN {printf "%.2f", h / a}')

echo "valid checks under hostile load: $hostile requests/s ($ratio of alone)"
echo "deep nesting answers: $(counts "$tmp/deep.codes")"
echo "31 MiB body answers: $(counts "$tmp/big.codes")"
echo "health checks: $(counts "$tmp/health.codes")"
echo "RSS: peak sampled $((peak >> 20)) MiB under load; VmHWM $((before >> 20)) MiB before, $((after >> 20)) MiB after; --memory-limit $((memlimit >> 20)) MiB"
echo "server alive: $alive"
grep -E '"status"' "$tmp/bench-hostile.txt" || sed -n '/^status/p' "$tmp/bench-hostile.txt"

fail=0
[[ $alive == yes ]] || { echo "FAIL: the server exited" >&2; fail=1; }
[[ $health_bad -eq 0 ]] || { echo "FAIL: $health_bad health checks did not answer 200" >&2; fail=1; }
((after <= memlimit)) || { echo "FAIL: RSS passed --memory-limit" >&2; fail=1; }
awk -v r="$ratio" 'BEGIN {exit !(r >= 0.5)}' || { echo "FAIL: valid throughput fell under half" >&2; fail=1; }
exit $fail
