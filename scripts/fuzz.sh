#!/bin/sh
# Builds the RDB loader fuzz target with clang's libFuzzer, AddressSanitizer and UBSan, and runs
# it over the seed corpus for SECONDS (default 60). Usage: scripts/fuzz.sh [SECONDS]
set -e
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
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
cmake --build build-fuzz --target rdb_load_fuzz
mkdir -p build-fuzz/corpus
cp fuzz/corpus/* build-fuzz/corpus/
build-fuzz/fuzz/rdb_load_fuzz -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=4096 \
  -malloc_limit_mb=2048 build-fuzz/corpus
