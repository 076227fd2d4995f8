#!/bin/bash
# `make test`'s verbs suite: boots the Soft-RoCE guest (boot.sh) and runs guest-suite.sh there
# against the build tree. Says plainly when it skips, and why: the machine cannot boot the guest
# (a package is missing, not root), or KV_SKIP_VERBS=1.
# usage: run-verbs-suite.sh BUILD_DIR [GROUP...]
# The guest's whole console goes to BUILD_DIR/softroce/verbs-suite.log; this prints the steps,
# the summary, and on failure the failing tests' output.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(realpath "${1:?usage: run-verbs-suite.sh BUILD_DIR [GROUP...]}")
shift
if [ "${KV_SKIP_VERBS:-0}" = 1 ]; then
  echo "verbs suite: SKIPPED (KV_SKIP_VERBS=1)"
  exit 0
fi
if ! reason=$("$HERE/boot.sh" --check); then
  echo "verbs suite: SKIPPED: this machine cannot boot the Soft-RoCE guest: $reason"
  echo "             (scripts/setup.sh installs what it needs; tests/softroce/README.md)"
  exit 0
fi
mkdir -p "$BUILD/softroce"
LOG=$BUILD/softroce/verbs-suite.log
echo "verbs suite: booting the Soft-RoCE guest (QEMU, emulated: a few minutes); log: $LOG"
start=$(date +%s)
rc=0
KV_SOFTROCE_STATE=$BUILD/softroce "$HERE/boot.sh" -t "${KV_VERBS_TIMEOUT:-1500}" -C "$BUILD" \
  "$HERE/guest-suite.sh" "$BUILD" "$@" > "$LOG" 2>&1 || rc=$?
tr -d '\r' < "$LOG" | grep -E '^(### \[|PASS |FAIL |SUMMARY|boot.sh:|\[guest\])' | sed 's/^/  /'
if [ "$rc" != 0 ]; then
  echo "verbs suite: FAILED (exit $rc) after $(( $(date +%s) - start )) s; failing tests:"
  tr -d '\r' < "$LOG" | awk '/^\[ RUN/ {buf=""} {buf=buf $0 "\n"} /^\[  FAILED  \].*ms\)$/ {printf "%s", buf}' | tail -n 300
  [ "$rc" = 125 ] && tail -n 40 "$LOG"
  exit 1
fi
echo "verbs suite: passed in $(( $(date +%s) - start )) s"
