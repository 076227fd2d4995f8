#!/usr/bin/env python3
"""The append-only file: kvstore vs redis-server, measured in the same run.

1. Write throughput: redis-benchmark SET (-d --size, -r 1000000) at each pipeline depth with
   appendonly yes under appendfsync everysec and always; median requests/second of --runs runs,
   alternating which server goes first. Automatic rewrites are off on both
   (auto-aof-rewrite-percentage 0) so that a rewrite does not land in one server's run only.
2. BGREWRITEAOF of --keys keys (--size random bytes each): seconds from the command until INFO
   says the rewrite is done, with the RDB preamble (the default). Redis runs with
   rdbcompression yes and no, and its faster one is its baseline (random data does not
   compress, so `no` usually wins).
3. Start-up load of the same AOF: the directory redis-server wrote (a base of --keys keys and
   an increment of --incr SET commands) is copied and loaded by each server; seconds from
   spawning the process until it answers PING with the dataset loaded.

Usage: bench/aof_bench.py [--runs 3] [--keys 1000000] [--incr 500000] [--size 100]
                          [--requests 200000] [--pipelines 1,16]
"""
import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_bench import ROOT, Server, free_port, run_benchmark, send_commands  # noqa: E402


def info_field(srv, section, name):
    for line in srv.command("INFO", section).splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    return ""


def fill(port, keys, size, seed, prefix=b"key:"):
    rng = random.Random(seed)
    send_commands(port, ([b"SET", prefix + b"%d" % i, rng.randbytes(size)] for i in range(keys)))


def wait_rewrite(srv, timeout=600):
    start = time.time()
    while time.time() - start < timeout:
        if (info_field(srv, "persistence", "aof_rewrite_in_progress") == "0" and
                info_field(srv, "persistence", "aof_rewrite_scheduled") == "0"):
            return
        time.sleep(0.005)
    raise RuntimeError(f"{srv.name}: rewrite did not finish")


def rewrite_seconds(srv):
    wait_rewrite(srv)
    start = time.time()
    srv.command("BGREWRITEAOF")
    wait_rewrite(srv)
    status = info_field(srv, "persistence", "aof_last_bgrewrite_status")
    if status != "ok":
        raise RuntimeError(f"{srv.name}: rewrite failed")
    return time.time() - start


def load_seconds(argv, src_dir):
    """Copies the AOF directory, starts a server on it; seconds until PING answers PONG."""
    work = tempfile.mkdtemp(prefix="kvbench-load-")
    shutil.copytree(os.path.join(src_dir, "appendonlydir"), os.path.join(work, "appendonlydir"))
    port = free_port()
    start = time.time()
    proc = subprocess.Popen(argv + ["--port", str(port), "--dir", work, "--save", "",
                                    "--appendonly", "yes", "--logfile",
                                    os.path.join(work, "log")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited while loading: "
                                   + open(os.path.join(work, "log")).read()[-2000:])
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return time.time() - start
            except OSError:
                pass
            time.sleep(0.002)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--incr", type=int, default=500000, help="SETs in the increment to load")
    ap.add_argument("--size", type=int, default=100, help="value size in bytes")
    ap.add_argument("--requests", type=int, default=200000, help="redis-benchmark -n (x4 at P16)")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipelines", default="1,16")
    ap.add_argument("--policies", default="everysec,always")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: write,rewrite,load")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    opts = ap.parse_args()
    skip = set(opts.skip.split(","))

    kv_argv = [os.path.join(opts.build, "kvstore-server")]
    redis_argv = ["redis-server"]
    aof = ["--appendonly", "yes", "--auto-aof-rewrite-percentage", "0"]
    pipelines = [int(p) for p in opts.pipelines.split(",")]
    policies = [p for p in opts.policies.split(",") if p]

    # 1. Write throughput.
    tput = {}
    if "write" not in skip:
        total, done = len(policies) * len(pipelines) * opts.runs * 2, 0
        for policy in policies:
            servers = {"kvstore": Server("kvstore", kv_argv + aof + ["--appendfsync", policy]),
                       "redis": Server("redis", redis_argv + aof + ["--appendfsync", policy])}
            try:
                for p in pipelines:
                    n = opts.requests * (4 if p > 1 else 1)
                    if policy == "always" and p == 1:
                        n //= 2
                    for run in range(opts.runs):
                        for name in ("kvstore", "redis") if run % 2 == 0 else ("redis", "kvstore"):
                            rps = run_benchmark(servers[name].port, "set", opts.size, p, n,
                                                opts.clients)
                            tput.setdefault((policy, p, name), []).append(rps)
                            done += 1
                            print(f"[{done}/{total}] SET {policy} P{p} {name}: {rps:,.0f} req/s",
                                  file=sys.stderr, flush=True)
            finally:
                for srv in servers.values():
                    srv.close()

    # 2. BGREWRITEAOF, and 3. loading what redis-server wrote.
    rewrite, load = {}, {}
    redis_dir = None
    if "rewrite" not in skip or "load" not in skip:
        configs = {"kvstore": kv_argv, "redis (rdbcompression yes)": redis_argv,
                   "redis (rdbcompression no)": redis_argv + ["--rdbcompression", "no"]}
        servers = {}
        try:
            for name, argv in configs.items():
                servers[name] = Server(name, argv + aof)
                print(f"filling {name}: {opts.keys:,} keys of {opts.size} B", file=sys.stderr,
                      flush=True)
                fill(servers[name].port, opts.keys, opts.size, seed=1)
            if "rewrite" not in skip:
                total, done = len(configs) * opts.runs, 0
                for run in range(opts.runs):
                    order = list(configs) if run % 2 == 0 else list(reversed(configs))
                    for name in order:
                        secs = rewrite_seconds(servers[name])
                        rewrite.setdefault(name, []).append(secs)
                        done += 1
                        print(f"[{done}/{total}] BGREWRITEAOF {name}: {secs:.3f} s",
                              file=sys.stderr, flush=True)
            if "load" not in skip:
                r = servers["redis (rdbcompression no)"]
                wait_rewrite(r)
                r.command("BGREWRITEAOF")
                wait_rewrite(r)
                print(f"adding {opts.incr:,} SETs to redis-server's increment", file=sys.stderr,
                      flush=True)
                fill(r.port, opts.incr, opts.size, seed=2, prefix=b"incr:")
                r.command("CONFIG", "SET", "appendfsync", "always")  # flushes the buffer
                redis_dir = tempfile.mkdtemp(prefix="kvbench-aof-")
                shutil.copytree(os.path.join(r.dir, "appendonlydir"),
                                os.path.join(redis_dir, "appendonlydir"))
        finally:
            for srv in servers.values():
                srv.close()
    if redis_dir:
        try:
            total, done = opts.runs * 2, 0
            for run in range(opts.runs):
                order = [("kvstore", kv_argv), ("redis", redis_argv)]
                for name, argv in order if run % 2 == 0 else reversed(order):
                    secs = load_seconds(argv, redis_dir)
                    load.setdefault(name, []).append(secs)
                    done += 1
                    print(f"[{done}/{total}] load {name}: {secs:.3f} s", file=sys.stderr,
                          flush=True)
        finally:
            shutil.rmtree(redis_dir, ignore_errors=True)

    med = statistics.median
    if tput:
        print(f"\nSET of {opts.size} B values with appendonly yes, redis-benchmark -c "
              f"{opts.clients}, median of {opts.runs} runs (both: auto-aof-rewrite-percentage 0)")
        print(f"{'appendfsync':<12}{'pipeline':>8}{'kvstore req/s':>16}{'redis req/s':>14}"
              f"{'ratio':>8}")
        for policy in policies:
            for p in pipelines:
                kv, rd = med(tput[(policy, p, "kvstore")]), med(tput[(policy, p, "redis")])
                print(f"{policy:<12}{p:>8}{kv:>16,.0f}{rd:>14,.0f}{kv / rd:>8.2f}")
    if rewrite:
        print(f"\nBGREWRITEAOF of {opts.keys:,} keys of {opts.size} random bytes (RDB preamble), "
              f"median of {opts.runs} runs")
        best = min((n for n in rewrite if n.startswith("redis")), key=lambda n: med(rewrite[n]))
        for name in rewrite:
            mark = "  <- redis' best" if name == best else ""
            print(f"{name:<28}{med(rewrite[name]):>8.3f} s{mark}")
        print(f"{'ratio (redis best / kvstore)':<28}{med(rewrite[best]) / med(rewrite['kvstore']):>8.2f}x")
    if load:
        print(f"\nStart-up load of redis-server's AOF ({opts.keys:,}-key RDB base + {opts.incr:,} "
              f"SETs), spawn to first PONG, median of {opts.runs} runs")
        for name in load:
            print(f"{name:<28}{med(load[name]):>8.3f} s")
        print(f"{'ratio (redis / kvstore)':<28}{med(load['redis']) / med(load['kvstore']):>8.2f}x")


if __name__ == "__main__":
    main()
