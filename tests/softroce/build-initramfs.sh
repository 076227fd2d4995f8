#!/bin/bash
# Builds the guest's initramfs: busybox-static, the virtio, 9p and overlay modules and an /init
# that mounts the host's root (shared read-only by QEMU over virtio-9p, tag `hostroot`) under a
# tmpfs overlay and switch_roots into it, so the guest runs the host's own binaries and
# libraries (the build tree included) unchanged.
#
# usage: build-initramfs.sh KVER OUTPUT
set -euo pipefail
KVER=${1:?kernel version}
OUT=${2:?output path}
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && "$BUSYBOX" --list | grep -qx switch_root || {
  echo "build-initramfs: $BUSYBOX with switch_root is missing (busybox-static)" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK"/{bin,dev,proc,sys,lower,rw,newroot,mods}
cp "$BUSYBOX" "$WORK/bin/busybox"

# The modules in dependency order (modprobe --show-depends resolves it).
: > "$WORK/mods/order"
for m in virtio_pci 9pnet_virtio 9p overlay; do
  modprobe -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  cp "$ko" "$WORK/mods/"
  basename "$ko" >> "$WORK/mods/order"
done

cat > "$WORK/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do insmod /mods/$m || echo "[initramfs] insmod $m failed"; done < /mods/order
# kv_* variables come from the kernel command line (unknown k=v pairs reach init's environment).
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /lower || {
  echo "[initramfs] cannot mount the host's root"; echo "GUEST_EXIT_CODE=125"; poweroff -f; }
mount -t tmpfs -o size=${kv_rwsize:-2g},mode=755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot || {
  echo "[initramfs] overlay failed"; echo "GUEST_EXIT_CODE=125"; poweroff -f; }
# The writable share (results), at the same path as on the host.
if [ -n "$kv_out" ]; then
  mkdir -p "/newroot$kv_out"
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none out "/newroot$kv_out" ||
    echo "[initramfs] cannot mount the output share"
fi
for d in proc sys dev; do mount --move /$d /newroot/$d; done
exec switch_root /newroot "$kv_init"
INIT
chmod +x "$WORK/init"
(cd "$WORK" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
