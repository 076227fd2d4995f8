#!/usr/bin/env bash
# Smoke test for kvstore-perf (run by ctest): a server and a client as two processes, every
# test over fabric/tcp, fabric/shm and plain TCP, small sizes. Fails on any error or on a
# missing table row.
# With providers after the binary (the Soft-RoCE guest: verbs "verbs;ofi_rxm"), runs the fabric
# tests over those alone.
set -euo pipefail
BIN=${1:?usage: perf_smoke.sh path/to/kvstore-perf [PROVIDER...]}
shift
PROVIDERS=("$@")
SOCKETS=0
if [ ${#PROVIDERS[@]} -eq 0 ]; then PROVIDERS=(tcp shm); SOCKETS=1; fi
LOG=$(mktemp)
"$BIN" --server --port 0 2>"$LOG" &
SRV=$!
trap 'kill $SRV 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 100); do grep -q "listening on port" "$LOG" && break; sleep 0.05; done
PORT=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$LOG")
[ -n "$PORT" ] || { echo "server did not start"; cat "$LOG"; exit 1; }
run() {
  # A failing client shows the server's side too (its log, and whether it is still running).
  out=$("$BIN" --client 127.0.0.1 --port "$PORT" --no-progress "$@") || {
    rc=$?
    echo "FAILED (client exit $rc): $*"
    if kill -0 $SRV 2>/dev/null; then echo "the server runs"; else
      wait $SRV && echo "the server exited 0" || echo "the server exited $?"; fi
    echo "server log:"; cat "$LOG"; exit 1; }
  echo "$out" | tail -n 1
  echo "$out" | tail -n 1 | grep -q "^$2 " || { echo "FAILED: $*"; cat "$LOG"; exit 1; }
}
for prov in "${PROVIDERS[@]}"; do
  for t in write_bw read_bw send_bw stream; do
    run --test $t --provider "$prov" --size 8m --chunk 256k --poll-mode economy
  done
  run --test send_lat --provider "$prov" --iters 200 --poll-mode economy
done
if [ "$SOCKETS" = 1 ]; then
  run --test stream --transport tcp --size 8m --poll-mode economy
  run --test write_bw --transport tcp --size 8m
  run --test send_lat --transport tcp --iters 200
fi
echo "kvstore-perf smoke: ok"
