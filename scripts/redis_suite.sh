#!/usr/bin/env bash
# Runs Redis 7.0's own Tcl test suite (the harness redis-server's developers use, from Debian's
# source package of the installed redis-server) against kvstore and, for comparison, against
# redis-server itself. A development tool: `make test` does not run it.
#
#   scripts/redis_suite.sh [UNIT ...]        e.g. unit/type/list integration/replication
#
# With no unit it runs the list below. Each unit runs once per server, one client at a time,
# under a 10-minute limit; the logs and a summary line per unit go to $WORK/logs/. A difference
# between the two summaries is a test that passes on redis-server and not on kvstore.
# Environment: WORK (default /tmp/kvstore-redis-suite), KVSTORE (the server binary, default
# build/kvstore-server), UNIT_TIMEOUT (seconds, default 600), SIDES (default "kvstore redis";
# "kvstore" alone once redis-server's results are known), TLS (yes: every connection of the
# suite over TLS, with the certificates Redis' utils/gen-test-certs.sh makes).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/kvstore-redis-suite}
KVSTORE=${KVSTORE:-$ROOT/build/kvstore-server}
UNIT_TIMEOUT=${UNIT_TIMEOUT:-600}
DEFAULT_UNITS=(
  unit/type/string unit/type/incr unit/type/list unit/type/hash unit/type/set unit/type/zset
  unit/type/stream unit/type/stream-cgroups unit/keyspace unit/expire unit/multi unit/pubsub
  unit/pubsubshard unit/scripting unit/functions unit/info unit/introspection
  unit/introspection-2 unit/latency-monitor unit/tracking unit/querybuf unit/protocol unit/other
  unit/dump unit/bitops unit/geo unit/hyperloglog unit/maxmemory unit/client-eviction unit/pause
  unit/lazyfree unit/shutdown unit/networking unit/auth unit/sort unit/scan
  integration/replication integration/replication-2 integration/replication-3
  integration/replication-4 integration/replication-psync integration/replication-buffer
  integration/block-repl integration/psync2 integration/aof integration/aof-multi-part
  integration/rdb integration/failover integration/shutdown integration/logging
  integration/redis-cli integration/corrupt-dump
  unit/cluster/announced-endpoints unit/cluster/links unit/cluster/misc
)

[[ -x $KVSTORE ]] || { echo "no kvstore-server at $KVSTORE: build first" >&2; exit 1; }
command -v tclsh >/dev/null || { echo "tclsh is missing: apt-get install tcl" >&2; exit 1; }
if [[ ${TLS:-no} == yes ]] && ! echo "package require tls" | tclsh >/dev/null 2>&1; then
  echo "Tcl's TLS package is missing: apt-get install tcl-tls" >&2
  exit 1
fi
version=$(dpkg-query -W -f '${Version}' redis-server)

# The suite: Debian's source package of the installed redis-server, fetched with an apt state
# of its own (deb-src lines), so the system's apt configuration is left alone.
if [[ ! -d $WORK/suite/tests ]]; then
  apt_dir=$WORK/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  cat >"$apt_dir/sources.list" <<EOF
deb-src [signed-by=$keyring] http://deb.debian.org/debian bookworm main
deb-src [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main
EOF
  opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
        -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
  apt-get "${opts[@]}" update -qq
  (cd "$apt_dir" && apt-get "${opts[@]}" source --download-only "redis=$version")
  orig=$(ls "$apt_dir"/redis_*.orig.tar.gz | head -1)
  mkdir -p "$WORK/suite"
  tar -xzf "$orig" -C "$WORK/suite" --strip-components=1 --wildcards '*/tests' '*/runtest' \
    '*/utils/gen-test-certs.sh'
fi
tls_args=()
if [[ ${TLS:-no} == yes ]]; then
  tls_args=(--tls)
  if [[ ! -f $WORK/suite/utils/gen-test-certs.sh ]]; then
    orig=$(ls "$WORK"/apt/redis_*.orig.tar.gz | head -1)
    tar -xzf "$orig" -C "$WORK/suite" --strip-components=1 --wildcards '*/utils/gen-test-certs.sh'
  fi
fi

# Two trees that differ in the server their src/redis-server names.
for side in kvstore redis; do
  tree=$WORK/$side
  if [[ ! -d $tree ]]; then
    mkdir -p "$tree/src"
    cp -r "$WORK/suite/tests" "$WORK/suite/runtest" "$tree/"
    # One line of unit/scripting runs SCRIPT DEBUG outside any test: kvstore has no Lua
    # debugger, and the harness would abort the whole unit on its error.
    [[ $side == kvstore ]] && sed -i '1388s/^    r script debug sync$/    catch {r script debug sync}/' \
      "$tree/tests/unit/scripting.tcl"
    for tool in redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
      ln -sf "/usr/bin/$tool" "$tree/src/$tool"
    done
  fi
  server=/usr/bin/redis-server
  [[ $side == kvstore ]] && server=$KVSTORE
  ln -sf "$server" "$tree/src/redis-server"
  if [[ ${TLS:-no} == yes && ! -f $tree/tests/tls/ca.crt ]]; then
    (cd "$tree" && bash "$WORK/suite/utils/gen-test-certs.sh" >/dev/null 2>&1)
  fi
done

units=("$@")
[[ ${#units[@]} -gt 0 ]] || units=("${DEFAULT_UNITS[@]}")
mkdir -p "$WORK/logs"
baseport=21111
for unit in "${units[@]}"; do
  for side in ${SIDES:-kvstore redis}; do
    log=$WORK/logs/$side-${unit//\//_}${tls_args:+-tls}.log
    start=$(date +%s)
    set +e
    (cd "$WORK/$side" && timeout -k 10 "$UNIT_TIMEOUT" ./runtest --single "$unit" --clients 1 \
      --durable --baseport "$baseport" --portcount 8000 --no-latency --timeout 180 \
      "${tls_args[@]}") 2>&1 |
      sed -u 's/\x1b\[[0-9;]*m//g' >"$log"
    rc=${PIPESTATUS[0]}
    set -e
    ok=$(grep -c '^\[ok\]' "$log" || true)
    err=$(grep -c -E '^\[(err|exception)\]' "$log" || true)
    line="$unit $side${tls_args:+ (tls)}: ok=$ok err=$err rc=$rc ($(($(date +%s) - start)) s)"
    echo "$line" | tee -a "$WORK/logs/summary.txt"
  done
done
