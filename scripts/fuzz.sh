#!/bin/sh
# Builds a fuzz target with clang's libFuzzer, AddressSanitizer and UBSan, and runs it for
# SECONDS (default 60): the RDB loader over the seed corpus (TARGET rdb_load, the default), or
# the glob matcher against its reference (TARGET glob; -timeout catches a slow match), or the
# ACL rules (TARGET acl_rules: SETUSER, ACL LIST's round trip, the ACL file parser, the check),
# or the cluster bus codec (TARGET cluster_bus: Decode on mutated messages, Encode's round trip).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET]
set -e
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
TARGET=${2:-rdb_load}
missing=""
for p in clang libclang-rt-14-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  apt-get install -y -q $missing >/dev/null
fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKV_FUZZ=ON -DKV_SANITIZE=address,undefined >/dev/null
cmake --build build-fuzz --target "${TARGET}_fuzz"
if [ "$TARGET" = glob ]; then
  mkdir -p build-fuzz/glob-corpus
  exec build-fuzz/fuzz/glob_fuzz -max_total_time="$SECONDS_TO_RUN" -timeout=2 -max_len=4096 \
    build-fuzz/glob-corpus
fi
if [ "$TARGET" = acl_rules ]; then
  mkdir -p build-fuzz/acl-corpus
  exec build-fuzz/fuzz/acl_rules_fuzz -max_total_time="$SECONDS_TO_RUN" -timeout=5 -max_len=1024 \
    build-fuzz/acl-corpus
fi
if [ "$TARGET" = cluster_bus ]; then
  mkdir -p build-fuzz/cluster-bus-corpus
  exec build-fuzz/fuzz/cluster_bus_fuzz -max_total_time="$SECONDS_TO_RUN" -timeout=5 -len_control=0 \
    -max_len=16384 build-fuzz/cluster-bus-corpus
fi
mkdir -p build-fuzz/corpus
cp fuzz/corpus/* build-fuzz/corpus/ 2>/dev/null || true  # seeds, where the tree has them
build-fuzz/fuzz/rdb_load_fuzz -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=4096 \
  -malloc_limit_mb=2048 build-fuzz/corpus
