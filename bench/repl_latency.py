#!/usr/bin/env python3
"""Replication latency: a write on the primary until it is readable on the replica, under a
steady write load, for redis->redis and kvstore->kvstore over TCP and over the RDMA data plane.

For each configuration: a primary with --keys keys and a synced replica; redis-benchmark keeps
writing to the primary (SET, pipeline 16, 2 clients, random keys), or with --rate N
bench/paced_load.py writes N SETs per second whatever the primary's speed, while a probe writes a
unique key on the primary and polls the replica for it, --probes times; prints p50 / p99 / max
in microseconds. Polling is back to back on one connection, so the resolution is one round trip
to the replica (tens of microseconds).

Usage: python3 bench/repl_latency.py [--probes N] [--keys N] [--build DIR] [--configs ...]
                                     [--rate N] [--runs N]
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
import rdb_bench  # noqa: E402
import repl_bench  # noqa: E402

CONFIGS = {
    "redis/tcp": ("redis", []),
    "kvstore/tcp": ("kvstore", ["--repl-transport", "tcp"]),
    "kvstore/rdma-tcp": ("kvstore", ["--repl-transport", "rdma", "--repl-rdma-provider", "tcp"]),
    "kvstore/rdma-shm": ("kvstore", ["--repl-transport", "rdma", "--repl-rdma-provider", "shm"]),
}


def pct(sorted_us, p):
    return sorted_us[min(len(sorted_us) - 1, int(len(sorted_us) * p))]


def load_name(rate):
    if rate:
        return f"SET at {rate} per second, pipeline 16, bench/paced_load.py"
    return "redis-benchmark SET -P 16 -c 2"


def measure(name, build, keys, probes, workdir, rate=0):
    kind, extra = CONFIGS[name]
    pd = tempfile.mkdtemp(dir=workdir)
    rd = tempfile.mkdtemp(dir=workdir)
    pproc, pc, pport = repl_bench.start(kind, build, pd, [])
    rproc, rc, _ = repl_bench.start(kind, build, rd, extra)
    for i in range(0, keys, 1000):
        args = ["MSET"]
        for k in range(i, min(i + 1000, keys)):
            args += [f"k:{k}", "x" * 100]
        pc.call(*args)
    rc.call("REPLICAOF", "127.0.0.1", str(pport))
    while "master_link_status:up" not in rc.call("INFO", "replication"):
        time.sleep(0.02)
    if rate:
        load = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "paced_load.py"),
                                 "--port", str(pport), "--rate", str(rate), "--keys", str(keys)],
                                stdout=subprocess.DEVNULL)
    else:
        load = subprocess.Popen(["redis-benchmark", "-p", str(pport), "-t", "set", "-n", "100000000",
                                 "-r", str(keys), "-P", "16", "-c", "2", "-q"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    lat = []
    try:
        for i in range(probes):
            key = f"probe:{i}"
            t0 = time.perf_counter()
            pc.call("SET", key, "1")
            while rc.call("EXISTS", key) != "1":
                pass
            lat.append((time.perf_counter() - t0) * 1e6)
            if i % 500 == 0:
                rdb_bench.log(f"  {name}: {i}/{probes} probes")
    finally:
        load.terminate()
        load.wait()
    repl_bench.stop([rc, pc], [rproc, pproc], [pd, rd])
    lat.sort()
    return pct(lat, 0.5), pct(lat, 0.99), lat[-1], pct(lat, 0.9)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probes", type=int, default=3000)
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--build", default=os.path.join(rdb_bench.ROOT, "build"))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--rate", type=int, default=0,
                    help="the load's SET commands per second (bench/paced_load.py); "
                         "0: redis-benchmark's closed loop, as fast as the primary goes")
    ap.add_argument("--runs", type=int, default=1,
                    help="runs per configuration (configurations alternate); medians")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="kvstore-latency-bench-")
    try:
        names = args.configs.split(",")
        res = {n: [] for n in names}
        for run in range(args.runs):
            for name in names:
                res[name].append(measure(name, args.build, args.keys, args.probes, workdir,
                                         args.rate))
                p50, p99 = res[name][-1][:2]
                rdb_bench.log(f"  run {run + 1}/{args.runs} {name}: p50 {p50:.0f} us, "
                              f"p99 {p99:.0f} us")
        print(f"\nReplication latency under a steady write load ({load_name(args.rate)}), "
              f"{args.probes} probes, microseconds" +
              (f", medians of {args.runs} runs" if args.runs > 1 else ""))
        print(f"{'configuration':>18} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}")
        for name in names:
            p50, p99, mx, p90 = (statistics.median(r[i] for r in res[name]) for i in range(4))
            print(f"{name:>18} {p50:8.0f} {p90:8.0f} {p99:8.0f} {mx:8.0f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
