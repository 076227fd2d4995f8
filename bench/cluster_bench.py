#!/usr/bin/env python3
"""Cluster throughput: a 3-primary kvstore cluster vs a 3-primary redis-server cluster.

Each cluster is created with redis-cli --cluster create (no replicas) on loopback, then
redis-benchmark --cluster runs SET and GET against it at pipeline 1 and 16. Both clusters run in
the same session, alternating, several runs per case; the table gives the medians and the
kvstore/redis ratio, and the servers' own CPU time per command (all three processes, every
thread, from /proc/PID/task/*/schedstat), which is steadier than throughput on a small machine
where redis-benchmark shares the cores. Redis runs in its default configuration, its fastest
for this job (small random values, no persistence).

Usage: bench/cluster_bench.py [--runs 5] [--requests 200000] [--clients 50] [--build build]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_bench import ROOT, Server, free_port  # noqa: E402
from tls_acl_bench import benchmark, cpu_ns  # noqa: E402


class Cluster:
    """Three primaries of one kind, created with redis-cli --cluster create."""

    def __init__(self, name, binary):
        self.name = name
        self.nodes = [Server(f"{name}-{i}", [binary, "--cluster-enabled", "yes",
                                             "--cluster-config-file", "nodes.conf",
                                             "--cluster-port", str(free_port())])
                      for i in range(3)]
        addrs = [f"127.0.0.1:{n.port}" for n in self.nodes]
        subprocess.run(["redis-cli", "--cluster", "create", *addrs, "--cluster-yes"],
                       capture_output=True, text=True, check=True, timeout=120)
        deadline = time.time() + 60
        while not all("cluster_state:ok" in n.command("CLUSTER", "INFO") for n in self.nodes):
            if time.time() > deadline:
                raise RuntimeError(f"{name} cluster did not come up")
            time.sleep(0.1)

    def cpu_ns(self):
        return sum(cpu_ns(n.proc.pid) for n in self.nodes)

    def close(self):
        for n in self.nodes:
            n.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()

    clusters = {"kvstore": Cluster("kvstore", os.path.join(a.build, "kvstore-server")),
                "redis": Cluster("redis", "redis-server")}
    try:
        qps = {}  # (kind, pipeline, test) -> [requests/s]
        cpu = {}  # (kind, pipeline) -> [server CPU ns per command]
        for run in range(a.runs):
            for pipeline in (1, 16):
                for kind, c in clusters.items():
                    before = c.cpu_ns()
                    r = benchmark(c.nodes[0].port, pipeline, a.requests, a.clients,
                                  ["--cluster"])
                    spent = c.cpu_ns() - before
                    for test, v in r.items():
                        qps.setdefault((kind, pipeline, test), []).append(v)
                    cpu.setdefault((kind, pipeline), []).append(spent / (2 * a.requests))
                    print(f"run {run + 1}/{a.runs} P{pipeline} {kind}: SET {r['SET']:.0f} "
                          f"GET {r['GET']:.0f} req/s, {spent / (2 * a.requests):.0f} ns CPU/cmd",
                          flush=True)
        med = {k: statistics.median(v) for k, v in qps.items()}
        mcpu = {k: statistics.median(v) for k, v in cpu.items()}
        print()
        print(f"3-primary cluster, redis-benchmark --cluster, {a.clients} clients, "
              f"{a.requests} requests, medians of {a.runs} runs (Redis: default configuration)")
        print()
        print("| pipeline | test | kvstore req/s | redis req/s | ratio |")
        print("|---|---|---|---|---|")
        for pipeline in (1, 16):
            for test in ("SET", "GET"):
                k, r = med[("kvstore", pipeline, test)], med[("redis", pipeline, test)]
                print(f"| {pipeline} | {test} | {k:.0f} | {r:.0f} | {k / r:.2f}x |")
        print()
        print("| pipeline | kvstore CPU ns/cmd | redis CPU ns/cmd | ratio (redis/kvstore) |")
        print("|---|---|---|---|")
        for pipeline in (1, 16):
            k, r = mcpu[("kvstore", pipeline)], mcpu[("redis", pipeline)]
            print(f"| {pipeline} | {k:.0f} | {r:.0f} | {r / k:.2f}x |")
    finally:
        for c in clusters.values():
            c.close()


if __name__ == "__main__":
    main()
