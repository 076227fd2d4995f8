#!/usr/bin/env python3
"""Full-sync time of replication: kvstore -> kvstore (over TCP and over the RDMA data plane)
vs redis -> redis, same dataset, same run.

Generates an RDB file of --keys keys of --size random bytes (default 1,000,000 x 1,000 bytes,
about 1 GB) and, for each configuration, --runs times (in rotating order): starts a primary on
the dataset and an empty replica, sends REPLICAOF and measures the time until the replica
reports master_link_status:up, the CPU seconds both processes (and the primary's snapshot
child) used meanwhile, and the snapshot throughput (file size over that time). Prints medians
and the speedup over Redis' best configuration. Configurations: redis and kvstore with diskless
and disk-based syncs over TCP, and kvstore over the RDMA data plane with libfabric's tcp and shm
providers (--configs picks some). All use repl-diskless-sync-delay 0 (Redis' default waits 5 s).

Usage: python3 bench/repl_bench.py [--keys N] [--size BYTES] [--runs R] [--build DIR]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rdb_bench  # noqa: E402  (dataset generator, client, server start)

CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of the process and of its reaped children (the snapshot child)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLK


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


CONFIGS = {
    "redis/diskless": ("redis", "diskless", []),
    "redis/disk": ("redis", "disk", []),
    "kvstore/tcp/diskless": ("kvstore", "diskless", ["--repl-transport", "tcp"]),
    "kvstore/tcp/disk": ("kvstore", "disk", ["--repl-transport", "tcp"]),
    "kvstore/rdma-tcp": ("kvstore", "diskless",
                         ["--repl-transport", "rdma", "--repl-rdma-provider", "tcp"]),
    "kvstore/rdma-shm": ("kvstore", "diskless",
                         ["--repl-transport", "rdma", "--repl-rdma-provider", "shm"]),
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


def one_sync(kind, build, dataset, mode, workdir, replica_args):
    pd = tempfile.mkdtemp(dir=workdir, prefix=kind + "-primary-")
    rd = tempfile.mkdtemp(dir=workdir, prefix=kind + "-replica-")
    shutil.copyfile(dataset, os.path.join(pd, "dump.rdb"))
    diskless = "yes" if mode == "diskless" else "no"
    pproc, pc, pport = start(kind, build, pd, ["--repl-diskless-sync", diskless])
    rproc, rc, _ = start(kind, build, rd, replica_args)
    keys = int(pc.call("DBSIZE"))
    cpu0 = cpu_seconds(pproc.pid) + cpu_seconds(rproc.pid)
    t0 = time.monotonic()
    rc.call("REPLICAOF", "127.0.0.1", str(pport))
    last = t0
    while True:
        info = rc.call("INFO", "replication")
        if "master_link_status:up" in info:
            break
        now = time.monotonic()
        if now - last > 2:
            last = now
            read = [l for l in info.split("\r\n") if l.startswith("master_sync_read_bytes")]
            rdb_bench.log(f"    ... {now - t0:.1f} s {read[0] if read else ''}")
        if now - t0 > 600:
            raise RuntimeError("sync did not finish")
        time.sleep(0.01)
    elapsed = time.monotonic() - t0
    cpu = cpu_seconds(pproc.pid) + cpu_seconds(rproc.pid) - cpu0
    rkeys = int(rc.call("DBSIZE"))
    if rkeys != keys:
        raise RuntimeError(f"{kind} replica has {rkeys} keys, primary {keys}")
    stop([rc, pc], [rproc, pproc], [pd, rd])
    return elapsed, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(rdb_bench.ROOT, "build"))
    ap.add_argument("--configs", default=",".join(CONFIGS))
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
                kind, mode, extra = CONFIGS[name]
                t, cpu = one_sync(kind, args.build, dataset, mode, workdir, extra)
                rdb_bench.log(f"  run {run + 1}/{args.runs} {name:22s}: {t:.3f} s to link up, "
                              f"{cpu:.2f} CPU s")
                r = res.setdefault(name, {"t": [], "cpu": []})
                r["t"].append(t)
                r["cpu"].append(cpu)
        med = {n: (statistics.median(res[n]["t"]), statistics.median(res[n]["cpu"])) for n in names}
        redis_best = min((med[n][0] for n in names if n.startswith("redis")), default=None)
        print(f"\nFull sync, REPLICAOF to master_link_status:up: {args.keys} keys x {args.size} "
              f"random bytes ({size / 1e9:.2f} GB RDB), medians of {args.runs}")
        print(f"{'configuration':>22} {'seconds':>8} {'Gbit/s':>7} {'CPU s':>6} {'vs best Redis':>14}")
        for n in names:
            t, cpu = med[n]
            vs = f"{redis_best / t:13.2f}x" if redis_best else " " * 14
            print(f"{n:>22} {t:8.3f} {size * 8 / t / 1e9:7.2f} {cpu:6.2f} {vs}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
