#!/bin/bash
# The verbs suite, run INSIDE the Soft-RoCE guest (boot.sh sets up rxe0 on dummy0 at
# $KV_RDMA_IP and rxe1 on loopback): every test that takes a provider, over libfabric's verbs
# provider (FI_EP_MSG) and verbs;ofi_rxm (FI_EP_RDM) where the data plane can use RDM.
# usage: guest-suite.sh BUILD_DIR [GROUP...]
#   groups: transport perf datalink e2e cluster (default: all)
# Prints one PASS/FAIL line per step and a SUMMARY line; exits 1 when a step failed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(realpath "${1:?usage: guest-suite.sh BUILD_DIR [GROUP...]}")
shift
GROUPS_RUN=${*:-transport perf datalink e2e cluster}
export KVSTORE_BUILD_DIR=$BUILD
export KV_TEST_VERBS=1
export KV_TEST_RDMA_ADDR=$KV_RDMA_IP
# The guest is emulated (TCG), tens of times slower than the host: a test process may run longer.
export KV_TEST_WATCHDOG_S=900
PASS=0; FAIL=0; RESULTS=()
now() { cut -d' ' -f1 /proc/uptime; }

# step NAME LIMIT_S CMD...: runs a step with a time limit and records the outcome. A GoogleTest
# step whose filter selected no test fails: a suite that ran nothing proves nothing.
step() {
  local name=$1 limit=$2; shift 2
  local t0 rc=0 out; t0=$(now); out=$(mktemp)
  echo; echo "### [$(now)s] $name: $*"
  timeout -k 10 "$limit" "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  if [ "$rc" = 0 ] && grep -q '^\[==========\] Running 0 tests' "$out"; then
    echo "$name: the filter selected no test"; rc=1
  fi
  rm -f "$out"
  local took; took=$(echo "$(now) - $t0" | bc)
  if [ "$rc" = 0 ]; then PASS=$((PASS + 1)); RESULTS+=("PASS $name (${took}s)")
  else FAIL=$((FAIL + 1)); RESULTS+=("FAIL $name (exit $rc, ${took}s)"); fi
}

echo "### devices"
rdma link show
fi_info -p verbs -t FI_EP_MSG | grep -m3 -E 'provider|domain'

for g in $GROUPS_RUN; do case $g in
  transport)
    # The channel: sizes, registered sources, credits and credit runs, slow consumers, rebuild
    # and resume, poll modes, idle CPU, hostile peers; then two processes with SIGKILL.
    # The 1 GiB stream is left to the host's providers: emulated rxe moves ~30-40 MB/s.
    step transport-channel 900 "$BUILD/src/transport/transport_channel_test" \
      '--gtest_filter=*verbs*:-*OneGibibyte*'
    step transport-fault 600 "$BUILD/src/transport/transport_fault_test" '--gtest_filter=*verbs*'
    ;;
  perf)
    step kvstore-perf 600 "$HERE/../../tools/perf_smoke.sh" \
      "$BUILD/kvstore-perf" verbs 'verbs;ofi_rxm'
    ;;
  datalink)
    step data-link-sender 300 "$BUILD/src/repl/repl_datalink_test" '--gtest_filter=*verbs*'
    ;;
  e2e)
    # Replication over the data link: full syncs (diskless and disk-based, from the ring and
    # from the mapped file), partial resync, the live stream, WAIT, link kill and resume, a
    # redis-server replica beside it, and `repl-transport auto` choosing verbs. Left out: two
    # tests that assert how many milliseconds small syncs take (tens, natively), which
    # emulation makes meaningless.
    step replication 1500 "$BUILD/tests/e2e_test" \
      '--gtest_filter=*verbs*:RdmaReplicationAuto.*:-*ASmallSyncEndsOnceItsSnapshotIsLoaded*:*ADiskBasedSyncSendsItsFileOnceTheChildExits*:*SlotMigration*'
    ;;
  cluster)
    # Whole-slot migration between kvstore primaries over verbs: under a write load, the source
    # or the target killed mid-snapshot, a cancel and a killed control connection.
    step slot-migration 1200 "$BUILD/tests/e2e_test" '--gtest_filter=Providers/SlotMigration*.*/verbs'
    ;;
  *) echo "unknown group $g"; FAIL=$((FAIL + 1)); RESULTS+=("FAIL unknown group $g") ;;
esac; done

echo
echo "### verbs suite"
printf '%s\n' "${RESULTS[@]}"
echo "SUMMARY: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
