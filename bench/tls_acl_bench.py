#!/usr/bin/env python3
"""TLS and ACL costs: kvstore vs redis-server, measured in the same run.

1. redis-benchmark --tls SET and GET at pipeline 1 and 16 against both servers' tls-port
   (certificates made here with the openssl tool; client certificates required, Redis' default).
2. The cost of an ACL user: SET and GET at pipeline 16 over plain TCP as the default user and as
   a user with 10 rules and key patterns (redis-benchmark --user), on both servers; each server's
   loss is its own ratio. Throughput on this 2-vCPU VM moves by tens of percent between runs
   (redis-benchmark shares the cores), so the server's own CPU time per command (every thread's
   on-CPU time from /proc/PID/task/*/schedstat) is reported beside it: the cost the check adds.

Servers alternate, several runs per case; the tables give medians and ratios.

Usage: bench/tls_acl_bench.py [--runs 3] [--requests 200000] [--clients 50] [--build build]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_bench import ROOT, Server, free_port  # noqa: E402

# Ten rules, key patterns among them, that let redis-benchmark's SET and GET through.
ACL_RULES = ["on", ">benchpw", "~key:*", "~counter:*", "%R~readonly:*", "%W~writeonly:*",
             "&news", "+@read", "+@write", "-@dangerous", "+ping", "+config|get"]


def make_certs(d):
    def run(cmd):
        subprocess.run(cmd, shell=True, check=True, capture_output=True)
    newkey = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    run(f"openssl req -x509 {newkey} -keyout {d}/ca.key -out {d}/ca.crt -days 30 "
        f"-subj '/CN=bench CA'")
    for name in ("server", "client"):
        with open(f"{d}/{name}.ext", "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        run(f"openssl req {newkey} -keyout {d}/{name}.key -out {d}/{name}.csr -subj '/CN={name}'")
        run(f"openssl x509 -req -in {d}/{name}.csr -CA {d}/ca.crt -CAkey {d}/ca.key "
            f"-CAcreateserial -days 30 -extfile {d}/{name}.ext -out {d}/{name}.crt")


def cpu_ns(pid):
    """Nanoseconds every thread of process `pid` has run on a CPU."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total


def benchmark(port, pipeline, requests, clients, extra):
    args = (["redis-benchmark", "-p", str(port), "-c", str(clients), "-n", str(requests),
             "-r", "1000000", "-d", "16", "-P", str(pipeline), "-t", "set,get", "--csv"] + extra)
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        cols = [c.strip('"') for c in line.split(",")]
        if cols and cols[0] in ("SET", "GET"):
            result[cols[0]] = float(cols[1])
    if len(result) != 2:
        raise RuntimeError(f"no result in redis-benchmark output: {out!r}")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()

    certs = tempfile.mkdtemp(prefix="kvbench-certs-")
    make_certs(certs)
    tls_server = ["--tls-cert-file", f"{certs}/server.crt", "--tls-key-file",
                  f"{certs}/server.key", "--tls-ca-cert-file", f"{certs}/ca.crt"]
    tls_client = ["--tls", "--cacert", f"{certs}/ca.crt", "--cert", f"{certs}/client.crt",
                  "--key", f"{certs}/client.key"]
    binaries = {"kvstore": [os.path.join(a.build, "kvstore-server")],
                "redis": ["/usr/bin/redis-server", "--appendonly", "no"]}
    servers, tls_ports = {}, {}
    try:
        for name, argv in binaries.items():
            tls_ports[name] = free_port()
            servers[name] = Server(name, argv + ["--tls-port", str(tls_ports[name])] + tls_server)
            servers[name].command("ACL", "SETUSER", "bench", *ACL_RULES)

        tls = {}  # (server, pipeline, test) -> [rps]
        acl = {}  # (server, user, test) -> [rps]
        acl_cpu = {}  # (server, user) -> [server CPU ns per command, SET and GET together]
        for run in range(a.runs):
            for name in binaries:
                for pipeline in (1, 16):
                    r = benchmark(tls_ports[name], pipeline, a.requests, a.clients, tls_client)
                    for test, rps in r.items():
                        tls.setdefault((name, pipeline, test), []).append(rps)
                    print(f"run {run + 1}/{a.runs} {name} tls P{pipeline}: "
                          f"SET {r['SET']:.0f} GET {r['GET']:.0f}", flush=True)
                users = [("default", []), ("bench", ["--user", "bench", "-a", "benchpw"])]
                if run % 2:
                    users.reverse()  # neither goes first every time
                for user, extra in users:
                    before = cpu_ns(servers[name].proc.pid)
                    r = benchmark(servers[name].port, 16, a.requests, a.clients, extra)
                    per_cmd = (cpu_ns(servers[name].proc.pid) - before) / (2 * a.requests)
                    acl_cpu.setdefault((name, user), []).append(per_cmd)
                    for test, rps in r.items():
                        acl.setdefault((name, user, test), []).append(rps)
                    print(f"run {run + 1}/{a.runs} {name} tcp P16 as {user}: "
                          f"SET {r['SET']:.0f} GET {r['GET']:.0f}, "
                          f"server CPU {per_cmd:.0f} ns/command", flush=True)
    finally:
        for s in servers.values():
            s.close()
        shutil.rmtree(certs, ignore_errors=True)

    med = statistics.median
    print(f"\nredis-benchmark --tls (client certificates), {a.clients} clients, 16-byte values, "
          f"medians of {a.runs} runs; Redis 7.0 with its defaults (one thread)")
    print("| test | pipeline | kvstore rps | redis rps | kvstore/redis |")
    print("|---|---|---|---|---|")
    for pipeline in (1, 16):
        for test in ("SET", "GET"):
            k, r = med(tls[("kvstore", pipeline, test)]), med(tls[("redis", pipeline, test)])
            print(f"| {test} | {pipeline} | {k:.0f} | {r:.0f} | {k / r:.2f}x |")
    print(f"\nA user with {len(ACL_RULES) - 2} permission rules (key patterns among them) against "
          f"the default user, "
          f"plain TCP, pipeline 16, medians of {a.runs} runs")
    print("| server | test | default rps | user rps | user/default |")
    print("|---|---|---|---|---|")
    for name in binaries:
        for test in ("SET", "GET"):
            d, u = med(acl[(name, "default", test)]), med(acl[(name, "bench", test)])
            print(f"| {name} | {test} | {d:.0f} | {u:.0f} | {u / d:.3f} |")
    print("\nThe same runs: the server's CPU time per command (SET and GET together), which the "
          "client's share of the cores does not move")
    print("| server | default ns/command | user ns/command | user/default |")
    print("|---|---|---|---|")
    for name in binaries:
        d, u = med(acl_cpu[(name, "default")]), med(acl_cpu[(name, "bench")])
        print(f"| {name} | {d:.0f} | {u:.0f} | {u / d:.3f} |")


if __name__ == "__main__":
    main()
