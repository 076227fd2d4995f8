#!/usr/bin/env python3
"""Throughput and memory: kvstore vs redis-server, measured in the same run.

Runs redis-benchmark against kvstore-server and Debian's redis-server, alternating between them,
several runs per case, and prints the median requests/second of each and the kvstore/Redis ratio.
Then loads a dataset into fresh servers and compares resident memory.

Usage: bench/redis_bench.py [--runs 3] [--requests 200000] [--keys 1000000] [--build build]
       bench/redis_bench.py --tests lpush,lpop,sadd,hset,zadd,lrange_100 --memory hashes,zsets
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process on a free loopback port, stopped on close()."""

    def __init__(self, name, argv):
        self.name = name
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="kvbench-")
        args = argv + ["--port", str(self.port), "--save", "", "--dir", self.dir,
                       "--logfile", os.path.join(self.dir, "log")]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.025)
        raise RuntimeError(f"{name} did not start")

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def command(self, *args):
        out = subprocess.run(["redis-cli", "-p", str(self.port)] + list(args),
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def run_benchmark(port, test, size, pipeline, requests, clients):
    args = ["redis-benchmark", "-p", str(port), "-c", str(clients), "-n", str(requests),
            "-r", "1000000", "-d", str(size), "-P", str(pipeline), "-t", test, "--csv"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        cols = [c.strip('"') for c in line.split(",")]
        # LRANGE_100 is reported as "LRANGE_100 (first 100 elements)".
        if cols and cols[0].split(" ")[0] == test.upper():
            return float(cols[1])
    raise RuntimeError(f"no result in redis-benchmark output: {out!r}")


def encode(parts):
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def send_commands(port, commands):
    """Sends an iterable of commands (lists of bytes) pipelined over one connection."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        pending, batch = 0, []
        for cmd in commands:
            batch.append(encode(cmd))
            if len(batch) == 100:
                s.sendall(b"".join(batch))
                batch = []
                pending += 1
                if pending == 16:  # keep the pipeline bounded
                    drain(s, pending * 100)
                    pending = 0
        s.sendall(b"".join(batch))
        drain(s, pending * 100 + len(batch))


def strings_dataset(n):
    """n distinct keys of 100 bytes, 1000 to an MSET."""
    value = b"v" * 100
    for start in range(0, n, 1000):
        parts = [b"MSET"]
        for i in range(start, min(n, start + 1000)):
            parts += [b"key:%012d" % i, value]
        yield parts


def hashes_dataset(n):
    """n hashes of 10 fields (field names and values of 8-10 bytes)."""
    for i in range(n):
        parts = [b"HSET", b"hash:%09d" % i]
        for f in range(10):
            parts += [b"field:%d" % f, b"val:%06d" % (i % 1000000)]
        yield parts


def zsets_dataset(n):
    """n sorted sets of 10 members (member names of 10 bytes, distinct scores)."""
    for i in range(n):
        parts = [b"ZADD", b"zset:%09d" % i]
        for m in range(10):
            parts += [b"%d" % (i % 1000 + m), b"member:%03d" % m]
        yield parts


DATASETS = {
    "strings": ("{n:,} keys of 100 B", strings_dataset, "key"),
    "hashes": ("{n:,} hashes of 10 fields", hashes_dataset, "hash"),
    "zsets": ("{n:,} sorted sets of 10 members", zsets_dataset, "zset"),
}


def drain(s, replies):
    """Reads `replies` one-line replies (+OK, :n)."""
    got = 0
    while got < replies:
        data = s.recv(65536)
        if not data:
            raise RuntimeError("server closed the connection")
        got += data.count(b"\r\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--keys", type=int, default=1000000, help="strings dataset size")
    ap.add_argument("--collections", type=int, default=100000, help="hashes/zsets dataset size")
    ap.add_argument("--tests", default="set,get", help="redis-benchmark -t tests, comma-separated")
    ap.add_argument("--memory", default="strings", help="datasets: strings,hashes,zsets")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--io-threads", default="0", help="kvstore io-threads (0: its default, three per four cores)")
    ap.add_argument("--pipelines", default="1,16", help="comma-separated pipeline depths")
    ap.add_argument("--sizes", default="16,1024", help="comma-separated value sizes in bytes")
    opts = ap.parse_args()

    kv_argv = [os.path.join(opts.build, "kvstore-server"), "--io-threads", opts.io_threads]
    redis_argv = ["redis-server", "--appendonly", "no"]
    pipelines = [int(x) for x in opts.pipelines.split(",")]
    sizes = [int(x) for x in opts.sizes.split(",")]
    tests = opts.tests.split(",")
    cases = [(t, size, p) for p in pipelines for size in sizes for t in tests]
    results = {}
    servers = {"kvstore": Server("kvstore", kv_argv), "redis": Server("redis", redis_argv)}
    try:
        total = len(cases) * opts.runs * 2
        done = 0
        for case in cases:
            test, size, pipeline = case
            n = opts.requests * (4 if pipeline > 1 else 1)
            for run in range(opts.runs):
                for name in ("kvstore", "redis") if run % 2 == 0 else ("redis", "kvstore"):
                    rps = run_benchmark(servers[name].port, test, size, pipeline, n, opts.clients)
                    results.setdefault((case, name), []).append(rps)
                    done += 1
                    print(f"[{done}/{total}] {test.upper()} {size}B P{pipeline} {name}: "
                          f"{rps:,.0f} req/s", file=sys.stderr, flush=True)

        print(f"\nredis-benchmark, {opts.clients} clients, -r 1000000, median of {opts.runs} runs")
        print(f"{'test':<11}{'value':>7}{'pipeline':>10}{'kvstore req/s':>16}{'redis req/s':>14}"
              f"{'ratio':>8}")
        for case in cases:
            kv = statistics.median(results[(case, "kvstore")])
            rd = statistics.median(results[(case, "redis")])
            test, size, pipeline = case
            print(f"{test.upper():<11}{str(size) + 'B':>7}{pipeline:>10}{kv:>16,.0f}{rd:>14,.0f}"
                  f"{kv / rd:>8.2f}")

        for dataset in [d for d in opts.memory.split(",") if d]:  # --memory "": none
            # Fresh servers, so what earlier runs left behind does not count.
            for srv in servers.values():
                srv.close()
            servers = {"kvstore": Server("kvstore", kv_argv),
                       "redis": Server("redis", redis_argv)}
            title, gen, unit = DATASETS[dataset]
            n = opts.keys if dataset == "strings" else opts.collections
            print(f"\nResident memory after loading " + title.format(n=n), flush=True)
            mem = {}
            for name, srv in servers.items():
                before = srv.rss_kb()
                t0 = time.time()
                send_commands(srv.port, gen(n))
                print(f"  loaded {name} in {time.time() - t0:.1f}s", file=sys.stderr, flush=True)
                after = srv.rss_kb()
                mem[name] = (after, (after - before) * 1024 / n)
            print(f"{'server':<10}{'RSS MiB':>10}{'bytes/' + unit:>14}")
            for name in ("kvstore", "redis"):
                print(f"{name:<10}{mem[name][0] / 1024:>10.1f}{mem[name][1]:>14.1f}")
            print(f"{'ratio':<10}{mem['kvstore'][0] / mem['redis'][0]:>10.2f}"
                  f"{mem['kvstore'][1] / mem['redis'][1]:>14.2f}")
    finally:
        for srv in servers.values():
            srv.close()


if __name__ == "__main__":
    main()
