#!/usr/bin/env bash
# Installs the Debian packages kvstore's build, tests and benchmarks need.
# Idempotent and non-interactive: only missing packages are installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config   # toolchain
  libgtest-dev                                   # unit and end-to-end tests
  libfabric-dev                                  # RDMA data plane (transport/)
  liblua5.1-0-dev                                # scripting (script/): Lua 5.1
  libssl-dev                                     # ACL password hashing (acl/): libcrypto
  redis-server redis-tools                       # oracle, interop peer, benchmark baseline
  python3                                        # benchmark drivers under bench/
  python3-redis                                  # redis-py, driven by tests/clients/
  valgrind                                       # the Lua lexer check (ScriptLexerValgrind)
  # The verbs suite (tests/softroce/): Debian's kernel booted under QEMU runs Soft-RoCE.
  qemu-system-x86 linux-image-amd64 busybox-static kmod iproute2 bc
  rdma-core ibverbs-providers libfabric-bin
)

# Node.js runs the ioredis client tests (tests/clients/); a machine without one gets Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # INITRD=No: the kernel is only booted by QEMU with the suite's own initramfs, so
  # initramfs-tools need not build /boot/initrd.img (about 20 s, twice).
  $SUDO env INITRD=No apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # The Debian package may start a system redis-server on 6379; kvstore's tests never use that
  # port, but `make run` does, so stop it when the package installed one.
  if command -v service >/dev/null 2>&1; then
    $SUDO service redis-server stop >/dev/null 2>&1 || true
  fi
fi

# The Node.js client libraries of tests/clients/package.json, into tests/clients/node_modules.
CLIENTS="$(cd "$(dirname "$0")/.." && pwd)/tests/clients"
if [ ! -d "$CLIENTS/node_modules/ioredis" ] || [ ! -d "$CLIENTS/node_modules/redis" ]; then
  echo "setup: installing the Node.js client libraries (npm) into $CLIENTS"
  (cd "$CLIENTS" && npm install --no-audit --no-fund --loglevel=error)
fi
