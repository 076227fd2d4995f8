#!/usr/bin/env python3
"""Eviction: kvstore vs redis-server under maxmemory, measured in the same run.

1. Throughput while evicting: both servers are filled past --maxmemory under allkeys-lru, then
   redis-benchmark SETs new 1 KB values (-r 10000000, so nearly every SET evicts a key) at each
   pipeline depth; median requests/second of --runs runs, alternating which server goes first.
2. Hit rate of a cache: a Zipf-distributed stream of GETs over --keyspace keys, each miss
   followed by a SET of the key (cache-aside), at a fixed --maxmemory, under allkeys-lru and
   allkeys-lfu. Both servers get the same stream; the table shows each hit rate and the
   difference in points.

Both servers run with their defaults otherwise (no persistence); Redis is Debian's 7.0 with
jemalloc: its best configuration for this job, there being no eviction setting to tune besides
maxmemory-samples (5 on both).

Usage: bench/evict_bench.py [--runs 3] [--maxmemory 64mb] [--requests 200000]
                            [--keyspace 200000] [--ops 300000] [--zipf 1.0]
"""
import argparse
import bisect
import os
import random
import socket
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_bench import ROOT, Server, drain, encode, run_benchmark, send_commands  # noqa: E402


def parse_memory(text):
    units = {"kb": 1024, "mb": 1024 ** 2, "gb": 1024 ** 3}
    for suffix, mult in units.items():
        if text.lower().endswith(suffix):
            return int(text[:-len(suffix)]) * mult
    return int(text)


def info_field(srv, section, name):
    for line in srv.command("INFO", section).splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    return ""


def fill(srv, keys, size):
    value = b"x" * size
    send_commands(srv.port, ([b"SET", b"fill:%d" % i, value] for i in range(keys)))


def zipf_stream(keyspace, ops, s, seed):
    """ops key indexes drawn from a Zipf distribution of exponent s over keyspace keys."""
    weights = [1.0 / (k + 1) ** s for k in range(keyspace)]
    cdf, total = [], 0.0
    for w in weights:
        total += w
        cdf.append(total)
    rng = random.Random(seed)
    # Key ranks are shuffled, so popular keys are not neighbours in the key space.
    names = list(range(keyspace))
    rng.shuffle(names)
    return [names[bisect.bisect_left(cdf, rng.random() * total)] for _ in range(ops)]


def read_replies(sock, n, buf):
    """Reads n replies to GET (bulk or null) or SET (+OK); returns (hits, buf)."""
    hits = 0
    while n > 0:
        while b"\r\n" not in buf:
            buf += sock.recv(1 << 20)
        if buf.startswith(b"$-1\r\n"):
            buf = buf[5:]
        elif buf.startswith(b"$"):
            end = buf.index(b"\r\n")
            length = int(buf[1:end])
            need = end + 2 + length + 2
            while len(buf) < need:
                buf += sock.recv(1 << 20)
            buf = buf[need:]
            hits += 1
        else:
            buf = buf[buf.index(b"\r\n") + 2:]
        n -= 1
    return hits, buf


def cache_hit_rate(srv, stream, size, batch=500):
    """Cache-aside over the stream: GET each key; SET the ones that missed. Returns the hit rate."""
    value = b"y" * size
    hits = 0
    buf = b""
    with socket.create_connection(("127.0.0.1", srv.port)) as sock:
        for start in range(0, len(stream), batch):
            keys = [b"key:%d" % k for k in stream[start:start + batch]]
            sock.sendall(b"".join(encode([b"GET", k]) for k in keys))
            got = []
            for k in keys:  # one reply at a time, to know which keys missed
                h, buf = read_replies(sock, 1, buf)
                got.append(h)
            hits += sum(got)
            missed = [k for k, h in zip(keys, got) if not h]
            if missed:
                sock.sendall(b"".join(encode([b"SET", k, value]) for k in missed))
                _, buf = read_replies(sock, len(missed), buf)
    return hits / len(stream)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--maxmemory", default="64mb")
    ap.add_argument("--requests", type=int, default=200000, help="redis-benchmark -n (x4 at P16)")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipelines", default="1,16")
    ap.add_argument("--keyspace", type=int, default=200000, help="keys of the hit-rate stream")
    ap.add_argument("--ops", type=int, default=300000, help="GETs of the hit-rate stream")
    ap.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of the stream")
    ap.add_argument("--size", type=int, default=1024, help="value size in bytes")
    ap.add_argument("--policies", default="allkeys-lru,allkeys-lfu")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    opts = ap.parse_args()

    limit = parse_memory(opts.maxmemory)
    kv_argv = [os.path.join(opts.build, "kvstore-server")]
    redis_argv = ["redis-server", "--appendonly", "no"]
    common = ["--maxmemory", str(limit), "--maxmemory-policy", "allkeys-lru"]

    # 1. Throughput while evicting.
    pipelines = [int(p) for p in opts.pipelines.split(",")]
    tput = {}
    servers = {"kvstore": Server("kvstore", kv_argv + common),
               "redis": Server("redis", redis_argv + common)}
    try:
        for name, srv in servers.items():
            print(f"filling {name} past {opts.maxmemory}", file=sys.stderr, flush=True)
            fill(srv, 2 * limit // opts.size, opts.size)
        total, done = len(pipelines) * opts.runs * 2, 0
        for p in pipelines:
            n = opts.requests * (4 if p > 1 else 1)
            for run in range(opts.runs):
                for name in ("kvstore", "redis") if run % 2 == 0 else ("redis", "kvstore"):
                    before = int(info_field(servers[name], "stats", "evicted_keys") or 0)
                    rps = run_benchmark(servers[name].port, "set", opts.size, p, n, opts.clients)
                    evicted = int(info_field(servers[name], "stats", "evicted_keys") or 0) - before
                    tput.setdefault((p, name), []).append(rps)
                    done += 1
                    print(f"[{done}/{total}] SET P{p} {name}: {rps:,.0f} req/s, "
                          f"{evicted:,} evicted", file=sys.stderr, flush=True)
        used = {name: int(info_field(srv, "memory", "used_memory")) for name, srv in servers.items()}
    finally:
        for srv in servers.values():
            srv.close()

    # 2. Hit rates.
    policies = [p for p in opts.policies.split(",") if p]
    rates = {}
    total, done = len(policies) * opts.runs * 2, 0
    for policy in policies:
        for run in range(opts.runs):
            stream = zipf_stream(opts.keyspace, opts.ops, opts.zipf, seed=run)
            for name in ("kvstore", "redis") if run % 2 == 0 else ("redis", "kvstore"):
                argv = (kv_argv if name == "kvstore" else redis_argv) + [
                    "--maxmemory", str(limit), "--maxmemory-policy", policy]
                srv = Server(name, argv)
                try:
                    rate = cache_hit_rate(srv, stream, opts.size)
                finally:
                    srv.close()
                rates.setdefault((policy, name), []).append(rate)
                done += 1
                print(f"[{done}/{total}] {policy} {name}: hit rate {rate * 100:.2f}%",
                      file=sys.stderr, flush=True)

    print(f"\nSET of {opts.size} B values while evicting (allkeys-lru, maxmemory "
          f"{opts.maxmemory}), redis-benchmark -c {opts.clients}, median of {opts.runs} runs")
    print(f"{'pipeline':>8}{'kvstore req/s':>16}{'redis req/s':>14}{'ratio':>8}")
    for p in pipelines:
        kv = statistics.median(tput[(p, "kvstore")])
        rd = statistics.median(tput[(p, "redis")])
        print(f"{p:>8}{kv:>16,.0f}{rd:>14,.0f}{kv / rd:>8.2f}")
    print(f"used_memory at the end: kvstore {used['kvstore']:,} B, redis {used['redis']:,} B "
          f"(maxmemory {limit:,})")
    print(f"\nHit rate of a cache-aside Zipf({opts.zipf}) stream of {opts.ops:,} GETs over "
          f"{opts.keyspace:,} keys of {opts.size} B, maxmemory {opts.maxmemory}, median of "
          f"{opts.runs} runs")
    print(f"{'policy':<14}{'kvstore':>10}{'redis':>10}{'points':>9}")
    for policy in policies:
        kv = statistics.median(rates[(policy, "kvstore")]) * 100
        rd = statistics.median(rates[(policy, "redis")]) * 100
        print(f"{policy:<14}{kv:>9.2f}%{rd:>9.2f}%{kv - rd:>+9.2f}")


if __name__ == "__main__":
    main()
