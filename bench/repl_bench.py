#!/usr/bin/env python3
"""Full-sync time of replication: kvstore -> kvstore (over TCP and over the RDMA data plane)
vs redis -> redis, same dataset, same run.

Generates an RDB file of --keys keys of --size random bytes (default 1,000,000 x 1,000 bytes,
about 1 GB) and, for each configuration, --runs times (in rotating order): starts a primary on
the dataset and an empty replica, sends REPLICAOF and measures the time until the replica
reports master_link_status:up, the CPU each process (the primary with its snapshot child, and
the replica) used meanwhile in seconds and as a percentage of that time, and the snapshot
throughput (file size over that time). Then, unless --probes 0, the p99 replication latency of
each transport under a steady write load (bench/repl_latency.py; --rate N for a fixed-rate one). Prints medians and the speedup over Redis' best
configuration, and draws the replica's sync progress over time (bytes of the snapshot received,
sampled every 10 ms, from the last run of each configuration) into --plot (an SVG file).
Configurations: redis (with rdbcompression yes and no) and kvstore with diskless and disk-based
syncs over TCP, and kvstore over the RDMA data plane with libfabric's tcp and shm providers
(--configs picks some). All use repl-diskless-sync-delay 0 (Redis' default waits 5 s). "vs best
Redis" compares with the fastest Redis configuration of the run, named above the table. Each row
also has the CPU seconds per GB of snapshot on each side and in all, and the replica's page
faults (minor and major, the process and its reaped children) during the sync.

Usage: python3 bench/repl_bench.py [--keys N] [--size BYTES] [--runs R] [--build DIR]
                                   [--probes N] [--rate N] [--warm MIB] [--plot FILE]
"""
import argparse
import mmap
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rdb_bench  # noqa: E402  (dataset generator, client, server start)
import svgplot  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


# The latency configuration (bench/repl_latency.py) that measures each sync configuration's
# transport.
LATENCY_CONFIG = {
    "redis/diskless": "redis/tcp",
    "redis/disk": "redis/tcp",
    "redis/diskless/nocomp": "redis/tcp",
    "redis/disk/nocomp": "redis/tcp",
    "kvstore/tcp/diskless": "kvstore/tcp",
    "kvstore/tcp/disk": "kvstore/tcp",
    "kvstore/rdma-tcp": "kvstore/rdma-tcp",
    "kvstore/rdma-shm": "kvstore/rdma-shm",
    "kvstore/rdma-shm/disk": "kvstore/rdma-shm",
}


def proc_stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    """utime + stime of the process and of its reaped children (the snapshot child)."""
    fields = proc_stat(pid)
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLK


def page_faults(pid):
    """Minor + major page faults of the process and of its reaped children."""
    fields = proc_stat(pid)
    return sum(int(fields[i]) for i in (7, 8, 9, 10))


def start(kind, build, d, extra):
    port = rdb_bench.free_port()
    log = os.path.join(d, "server.log")
    if kind == "kvstore":
        cmd = [os.path.join(build, "kvstore-server")]
    else:
        cmd = ["redis-server", "--appendonly", "no"]
    cmd += ["--port", str(port), "--dir", d, "--save", "", "--logfile", log,
            "--repl-diskless-sync-delay", "0"] + extra
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline:
        try:
            c = rdb_bench.Client(port)
            if c.call("PING") == "PONG":
                info = c.call("INFO", "persistence")
                if "loading:0" in info:
                    return proc, c, port
        except (OSError, RuntimeError):
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"{kind} exited")
        time.sleep(0.05)
    raise RuntimeError(f"{kind} did not start")


# (server, sync mode, replica arguments[, primary arguments]). "diskless" is diskless on both
# ends: the primary streams the snapshot (repl-diskless-sync yes) and the replica loads it as it
# arrives (repl-diskless-load swapdb); "disk" saves a file on the primary and receives one on the
# replica (repl-diskless-sync no, repl-diskless-load disabled). Redis runs with and without
# rdbcompression: on random data LZF finds nothing to compress and only costs time, so "nocomp"
# is usually Redis at its best; the table names whichever of its configurations won.
SWAPDB = ["--repl-diskless-load", "swapdb"]
DISK_LOAD = ["--repl-diskless-load", "disabled"]
NOCOMP = ["--rdbcompression", "no"]
CONFIGS = {
    "redis/diskless": ("redis", "diskless", SWAPDB),
    "redis/disk": ("redis", "disk", DISK_LOAD),
    "redis/diskless/nocomp": ("redis", "diskless", SWAPDB, NOCOMP),
    "redis/disk/nocomp": ("redis", "disk", DISK_LOAD, NOCOMP),
    "kvstore/tcp/diskless": ("kvstore", "diskless", ["--repl-transport", "tcp"] + SWAPDB),
    "kvstore/tcp/disk": ("kvstore", "disk", ["--repl-transport", "tcp"] + DISK_LOAD),
    "kvstore/rdma-tcp": ("kvstore", "diskless",
                         ["--repl-transport", "rdma", "--repl-rdma-provider", "tcp"] + SWAPDB),
    "kvstore/rdma-shm": ("kvstore", "diskless",
                         ["--repl-transport", "rdma", "--repl-rdma-provider", "shm"] + SWAPDB),
    "kvstore/rdma-shm/disk": ("kvstore", "disk",
                              ["--repl-transport", "rdma", "--repl-rdma-provider", "shm"] +
                              DISK_LOAD),
}


def stop(clients, procs, dirs):
    """Shuts the servers down (SHUTDOWN answers by closing) and removes their directories."""
    for c in clients:
        try:
            c.call("SHUTDOWN", "NOSAVE")
        except (RuntimeError, OSError):
            pass
    for p in procs:
        p.wait(timeout=60)
    for d in dirs:
        shutil.rmtree(d)


def warm_memory(mib):
    """Faults in `mib` MiB of fresh memory and frees it, so that the kernel has it at hand.

    On a VM that reports free pages to its host (virtio-balloon free page reporting: the
    kernel keeps about max_waiting_mib of freed memory before it gives pages back), faulting
    in memory the host took back is the host's work billed to the faulting process: 3.2-3.8
    CPU-s per GiB here against 0.25-0.3 for memory the kernel still holds (tools/
    kvstore-sync-floor). A replica's 1 GB dataset then costs whichever the kernel hands out,
    and that, not the server, decides much of the replica's CPU. Done right before REPLICAOF,
    for every configuration alike; 0 (the default) leaves memory as it is."""
    if mib <= 0:
        return
    m = mmap.mmap(-1, mib << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m.madvise(23)  # MADV_POPULATE_WRITE (Linux 5.14)
    except OSError:
        for i in range(0, mib << 20, 4096):
            m[i] = 1
    m.close()


def one_sync(kind, build, dataset, mode, workdir, replica_args, primary_args=(), warm_mib=0):
    pd = tempfile.mkdtemp(dir=workdir, prefix=kind + "-primary-")
    rd = tempfile.mkdtemp(dir=workdir, prefix=kind + "-replica-")
    shutil.copyfile(dataset, os.path.join(pd, "dump.rdb"))
    diskless = "yes" if mode == "diskless" else "no"
    pproc, pc, pport = start(kind, build, pd, ["--repl-diskless-sync", diskless] +
                             list(primary_args))
    rproc, rc, _ = start(kind, build, rd, replica_args)
    keys = int(pc.call("DBSIZE"))
    warm_memory(warm_mib)
    pcpu0, rcpu0 = cpu_seconds(pproc.pid), cpu_seconds(rproc.pid)
    rflt0 = page_faults(rproc.pid)
    t0 = time.monotonic()
    rc.call("REPLICAOF", "127.0.0.1", str(pport))
    last = t0
    progress = [(0.0, 0)]  # (seconds, snapshot bytes the replica has received)
    while True:
        info = rc.call("INFO", "replication")
        now = time.monotonic()
        if "master_link_status:up" in info:
            break
        read = [l for l in info.split("\r\n") if l.startswith("master_sync_read_bytes:")]
        if read:
            progress.append((now - t0, max(progress[-1][1], int(read[0].split(":")[1]))))
        elif progress[-1][1] > 0:
            progress.append((now - t0, progress[-1][1]))  # received, now loading
        if now - last > 2:
            last = now
            rdb_bench.log(f"    ... {now - t0:.1f} s {read[0] if read else ''}")
        if now - t0 > 600:
            raise RuntimeError("sync did not finish")
        time.sleep(0.01)
    elapsed = time.monotonic() - t0
    # The snapshot child's CPU counts once the primary has reaped it (which may come a moment
    # after the replica is up).
    deadline = time.monotonic() + 10
    while ("rdb_bgsave_in_progress:1" in pc.call("INFO", "persistence") and
           time.monotonic() < deadline):
        time.sleep(0.01)
    pcpu = cpu_seconds(pproc.pid) - pcpu0
    rcpu = cpu_seconds(rproc.pid) - rcpu0
    rflt = page_faults(rproc.pid) - rflt0
    progress.append((elapsed, max(progress[-1][1], os.path.getsize(dataset))))
    rkeys = int(rc.call("DBSIZE"))
    if rkeys != keys:
        raise RuntimeError(f"{kind} replica has {rkeys} keys, primary {keys}")
    stop([rc, pc], [rproc, pproc], [pd, rd])
    return elapsed, pcpu, rcpu, rflt, progress


def repl_latency_load(rate):
    import repl_latency  # noqa: E402  (imports this module)
    return repl_latency.load_name(rate)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(rdb_bench.ROOT, "build"))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--probes", type=int, default=1000,
                    help="latency probes per transport (0: skip the latency column)")
    ap.add_argument("--rate", type=int, default=0,
                    help="the latency load's SET commands per second (repl_latency.py --rate); "
                         "0: redis-benchmark's closed loop")
    ap.add_argument("--warm", type=int, default=0,
                    help="MiB of memory to fault in and free right before each REPLICAOF, so "
                         "that the replica's dataset lands on memory the kernel holds (on a VM "
                         "that hands freed pages back to its host); 0: leave memory as it is")
    ap.add_argument("--plot", default=os.path.join(rdb_bench.ROOT, "bench", "sync_progress.svg"),
                    help="SVG file for the sync-progress plot ('' to skip)")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="kvstore-repl-bench-")
    try:
        dataset = os.path.join(workdir, "dataset.rdb")
        rdb_bench.log(f"generating {args.keys} keys x {args.size} random bytes")
        rdb_bench.write_dataset(dataset, args.keys, args.size)
        size = os.path.getsize(dataset)
        names = args.configs.split(",")
        res = {}
        for run in range(args.runs):
            order = names[run % len(names):] + names[:run % len(names)]
            for name in order:
                kind, mode, extra, *primary = CONFIGS[name]
                t, pcpu, rcpu, rflt, progress = one_sync(kind, args.build, dataset, mode, workdir,
                                                         extra, *(primary or [()]),
                                                         warm_mib=args.warm)
                rdb_bench.log(f"  run {run + 1}/{args.runs} {name:22s}: {t:.3f} s to link up, "
                              f"CPU s primary {pcpu:.2f} replica {rcpu:.2f}, replica page "
                              f"faults {rflt}")
                r = res.setdefault(name, {"t": [], "pcpu": [], "rcpu": []})
                r["t"].append(t)
                r["pcpu"].append(100 * pcpu / t)
                r["rcpu"].append(100 * rcpu / t)
                r.setdefault("pcpus", []).append(pcpu)
                r.setdefault("rcpus", []).append(rcpu)
                r.setdefault("rflt", []).append(rflt)
                r["progress"] = progress
        med = {n: {k: statistics.median(res[n][k])
                   for k in ("t", "pcpu", "rcpu", "pcpus", "rcpus", "rflt")}
               for n in names}
        p99 = {}
        if args.probes > 0:
            import repl_latency  # noqa: E402  (imports this module)
            for lat in dict.fromkeys(LATENCY_CONFIG[n] for n in names):
                rdb_bench.log(f"  latency {lat}: {args.probes} probes under a steady write load")
                p99[lat] = repl_latency.measure(lat, args.build, 100000, args.probes, workdir,
                                                args.rate)[1]
        redis_names = [n for n in names if n.startswith("redis")]
        best_name = min(redis_names, key=lambda n: med[n]["t"], default=None)
        redis_best = med[best_name]["t"] if best_name else None
        gb = size / 1e9
        print(f"\nFull sync, REPLICAOF to master_link_status:up: {args.keys} keys x {args.size} "
              f"random bytes ({size / 1e9:.2f} GB RDB), medians of {args.runs}; CPU in % of the "
              f"sync time and in CPU seconds (primary incl. its snapshot child); p99 latency: a "
              f"write on the primary until readable on the replica under "
              f"{repl_latency_load(args.rate)}, {args.probes} probes")
        if args.warm:
            print(f"Before each REPLICAOF, {args.warm} MiB of memory faulted in and freed "
                  f"(--warm: the replica's dataset lands on memory the kernel holds)")
        if best_name:
            print(f"Redis' best configuration in this run: {best_name} ({redis_best:.3f} s); "
                  f"'vs best Redis' divides its time by each row's")
        print(f"{'configuration':>22} {'seconds':>8} {'Gbit/s':>7} {'prim CPU%':>9} "
              f"{'repl CPU%':>9} {'prim CPU s':>10} {'repl CPU s':>10} {'prim s/GB':>9} "
              f"{'repl s/GB':>9} {'all s/GB':>8} {'repl faults':>11} {'p99 us':>7} "
              f"{'vs best Redis':>14}")
        for n in names:
            m = med[n]
            vs = f"{redis_best / m['t']:13.2f}x" if redis_best else " " * 14
            lat = p99.get(LATENCY_CONFIG[n])
            lat = f"{lat:7.0f}" if lat is not None else f"{'-':>7}"
            print(f"{n:>22} {m['t']:8.3f} {size * 8 / m['t'] / 1e9:7.2f} {m['pcpu']:9.0f} "
                  f"{m['rcpu']:9.0f} {m['pcpus']:10.2f} {m['rcpus']:10.2f} "
                  f"{m['pcpus'] / gb:9.2f} {m['rcpus'] / gb:9.2f} "
                  f"{(m['pcpus'] + m['rcpus']) / gb:8.2f} {m['rflt']:11.0f} {lat} {vs}")
        if args.plot:
            series = [(n, [(t, min(100.0, 100 * b / size)) for t, b in res[n]["progress"]])
                      for n in names]
            svgplot.line_chart(args.plot, series, f"Full sync of {size / 1e9:.2f} GB: snapshot "
                               f"received by the replica", "seconds since REPLICAOF",
                               "% of the snapshot received", width=820)
            rdb_bench.log(f"sync progress plot written to {args.plot}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
