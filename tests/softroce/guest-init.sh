#!/bin/bash
# PID 1 inside the guest, after switch_root into the overlay of the host's root: a minimal
# environment, Soft-RoCE (rdma_rxe on a dummy device at $KV_RDMA_IP and on loopback), then the
# command file $kv_cmd. Prints "GUEST_EXIT_CODE=<rc>" on the console and powers the VM off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
mount -t tmpfs -o mode=755 tmpfs /run
# /tmp stays the overlay's: the host's /tmp shows through (a checkout or build tree may live
# there), and what the guest writes goes to the overlay's tmpfs upper layer.
chmod 1777 /tmp
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
hostname softroce-guest
ip link set lo up
ulimit -l unlimited  # memory registration pins pages
ulimit -n 65536

finish() {
  echo "GUEST_EXIT_CODE=$1"
  sync
  echo o > /proc/sysrq-trigger  # immediate power-off; QEMU then exits
  sleep 10
}

# No udev here: the RDMA modules are loaded by hand (rdma_ucm: libfabric's verbs provider
# connects through rdma_cm).
export KV_RDMA_IP=${kv_rdma_ip:-10.77.0.1}
setup_rxe() {
  modprobe -a rdma_rxe ib_uverbs rdma_ucm dummy || return 1
  ip link add dummy0 type dummy || return 1
  ip link set dummy0 up || return 1
  ip addr add "$KV_RDMA_IP/24" dev dummy0 || return 1
  rdma link add rxe0 type rxe netdev dummy0 || return 1
  # and one on loopback, for peers that meet on 127.0.0.1 (the end-to-end tests' servers)
  rdma link add rxe1 type rxe netdev lo || return 1
}
if ! setup_rxe; then
  echo "[guest] Soft-RoCE setup failed"
  finish 126
fi
# ofi_rxm sizes its verbs CQ as (rx + tx) x FI_UNIVERSE_SIZE entries (default 256: 65,536), more
# than rxe's max_cqe (32,767); fi_enable then fails with "Unable to create verbs CQ".
export FI_UNIVERSE_SIZE=64
echo "[guest] $(cut -d' ' -f1 /proc/uptime)s: rxe0 on dummy0 ($KV_RDMA_IP), rxe1 on lo; running $kv_cmd"
rc=0
cd "${kv_cwd:-/}" && bash "$kv_cmd" || rc=$?
echo "[guest] $(cut -d' ' -f1 /proc/uptime)s: done"
finish "$rc"
