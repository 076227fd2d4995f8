#!/bin/bash
# Boots Debian's stock kernel under QEMU with the host's root filesystem shared read-only
# (virtio-9p, a tmpfs overlay on top), brings up Soft-RoCE (rdma_rxe) in the guest and runs a
# command there as root; prints the guest's console and exits with the command's exit code.
#
# usage: boot.sh [-t SECS] [-m MEM] [-c CPUS] [-o DIR] [-C DIR] [-e K=V]... COMMAND [ARG...]
#        boot.sh --check      says whether a guest can boot here (exit 0) or why not (exit 77)
#   -t SECS  wall-clock limit for the whole boot (default 600)
#   -m MEM   guest memory (default 4G)        -c CPUS  guest CPUs (default: the host's, max 4)
#   -o DIR   a host directory mounted read-write at the same path in the guest (results)
#   -C DIR   the command's working directory (default: the current one)
#   -e K=V   an environment variable for the command (repeatable)
# Exit codes: the command's; 125 when the guest did not report one (boot failure, timeout);
# 126 when Soft-RoCE could not be set up in the guest; 77 from --check when it cannot boot.
# Environment: KV_SOFTROCE_STATE (initramfs and command files; default build/softroce under
# the repository), KVER (kernel version; default the newest in /boot), QEMU_ACCEL=auto|kvm|tcg.
#
# The guest has no network device: everything talks to its own address on the dummy device
# (KV_RDMA_IP, 10.77.0.1) or loopback. Build before booting: the host root is mounted with
# cache=loose, so files changed while the guest runs may not be seen.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
STATE=${KV_SOFTROCE_STATE:-$REPO/build/softroce}

newest_kernel() { ls -1 /boot/vmlinuz-* 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V | tail -1; }

# Prints why no guest can boot here, or nothing.
why_not() {
  command -v qemu-system-x86_64 >/dev/null || { echo "qemu-system-x86_64 is not installed"; return; }
  local kver=${KVER:-$(newest_kernel)}
  [ -n "$kver" ] && [ -r "/boot/vmlinuz-$kver" ] || { echo "no kernel in /boot (linux-image-amd64)"; return; }
  modprobe -S "$kver" -n rdma_rxe 2>/dev/null || { echo "kernel $kver has no rdma_rxe module"; return; }
  [ -x /bin/busybox ] || { echo "busybox-static is not installed"; return; }
  command -v rdma >/dev/null || { echo "iproute2's rdma tool is missing"; return; }
  [ -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] ||
    ls /usr/lib/*/libibverbs/librxe-* >/dev/null 2>&1 || { echo "ibverbs-providers (librxe) is not installed"; return; }
  [ "$(id -u)" = 0 ] || { echo "not root (QEMU's 9p export of / needs it)"; return; }
}

if [ "${1:-}" = --check ]; then
  reason=$(why_not)
  [ -z "$reason" ] && exit 0
  echo "$reason"
  exit 77
fi

TIMEOUT=600; MEM=4G; CPUS=$(( $(nproc) > 4 ? 4 : $(nproc) )); OUTDIR=; CWD=$PWD; ENVS=()
while getopts "t:m:c:o:C:e:" opt; do
  case $opt in
    t) TIMEOUT=$OPTARG ;; m) MEM=$OPTARG ;; c) CPUS=$OPTARG ;;
    o) OUTDIR=$(realpath "$OPTARG") ;; C) CWD=$(realpath "$OPTARG") ;; e) ENVS+=("$OPTARG") ;;
    *) sed -n '2,21p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n '2,21p' "$0"; exit 2; }
reason=$(why_not)
[ -z "$reason" ] || { echo "boot.sh: cannot boot a guest here: $reason" >&2; exit 77; }

KVER=${KVER:-$(newest_kernel)}
mkdir -p "$STATE"
INITRD=$STATE/initramfs-$KVER.cpio.gz
if [ ! -f "$INITRD" ] || [ "$HERE/build-initramfs.sh" -nt "$INITRD" ]; then
  "$HERE/build-initramfs.sh" "$KVER" "$INITRD" || exit 125
fi

# The command file: the environment and the command, quoted as given.
CMDFILE=$(mktemp "$STATE/cmd.XXXXXX")
trap 'rm -f "$CMDFILE"' EXIT
{
  for kv in "${ENVS[@]}"; do printf 'export %q\n' "$kv"; done
  printf '%q ' "$@"; echo
} > "$CMDFILE"

ACCEL=${QEMU_ACCEL:-auto}
if [ "$ACCEL" = auto ]; then
  # KVM only with real hardware virtualisation: a /dev/kvm backed by kvm_pvm (nested PVM, as on
  # Firecracker VMs) accepts KVM_CREATE_VM but hangs a stock kernel right after boot.
  ACCEL=tcg
  if [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
    ACCEL=kvm
  fi
fi
if [ "$ACCEL" = kvm ]; then
  ACCEL_ARGS=(-enable-kvm -cpu host,-arch-capabilities)
else
  ACCEL_ARGS=(-accel tcg,thread=multi -cpu max)
fi
OUT_ARGS=(); OUT_APPEND=
if [ -n "$OUTDIR" ]; then
  mkdir -p "$OUTDIR"
  OUT_ARGS=(-virtfs "local,path=$OUTDIR,mount_tag=out,security_model=none,multidevs=remap")
  OUT_APPEND="kv_out=$OUTDIR"
fi
echo "boot.sh: kernel $KVER, accel $ACCEL, $CPUS CPUs, $MEM" >&2
LOG=$(mktemp)
trap 'rm -f "$CMDFILE" "$LOG"' EXIT
start=$(date +%s.%N)
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 "${ACCEL_ARGS[@]}" -smp "$CPUS" -m "$MEM" \
  -nodefaults -display none -serial stdio -no-reboot \
  -kernel "/boot/vmlinuz-$KVER" -initrd "$INITRD" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  "${OUT_ARGS[@]}" \
  -append "console=ttyS0 loglevel=3 panic=-1 edd=off kv_init=$HERE/guest-init.sh kv_cmd=$CMDFILE kv_cwd=$CWD $OUT_APPEND" \
  </dev/null 2>&1 | tee "$LOG"
qrc=${PIPESTATUS[0]}
rc=$(tr -d '\r' < "$LOG" | sed -n 's/^GUEST_EXIT_CODE=\([0-9]*\)$/\1/p' | tail -1)
printf 'boot.sh: guest exit code %s, %.0f s\n' "${rc:-none}" "$(echo "$(date +%s.%N) - $start" | bc)" >&2
if [ -z "$rc" ]; then
  [ "$qrc" = 124 ] && echo "boot.sh: timed out after ${TIMEOUT}s" >&2
  exit 125
fi
exit "$rc"
