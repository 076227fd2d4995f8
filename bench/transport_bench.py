#!/usr/bin/env python3
"""The data plane: kvstore-perf `stream` (the full channel) vs `write_bw` (raw one-sided writes)
on the same fabric provider, and vs plain TCP sockets, 1 GiB per run, medians of several runs.

Starts one `kvstore-perf --server` on a free loopback port and runs the client for every case,
alternating the cases within each round so that machine noise hits them alike. Progress goes to
stderr, the table (markdown) to stdout.

Usage: bench/transport_bench.py [--runs 3] [--size 1g] [--build build]
       [--providers tcp,shm] [--modes performance,auto,economy] [--credits 4] [--window 16]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_server(perf):
    proc = subprocess.Popen([perf, "--server", "--port", "0"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    m = re.search(r"listening on port (\d+)", line)
    if not m:
        proc.kill()
        sys.exit("kvstore-perf server did not start: " + line)
    return proc, int(m.group(1))


def run_client(perf, port, args):
    out = subprocess.run([perf, "--client", "127.0.0.1", "--port", str(port), "--no-progress"]
                         + args, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError("kvstore-perf %s: %s" % (" ".join(args), out.stderr.strip()))
    row = out.stdout.strip().splitlines()[-1].split()
    # test transport bytes chunk iters GB/s Gbit/s p50 p99 cli_cpu srv_cpu
    return {"gbs": float(row[5]), "chunk": int(row[3]), "p50": float(row[7]),
            "p99": float(row[8]), "cli_cpu": float(row[9]), "srv_cpu": float(row[10])}


def cases(a):
    out = []
    for prov in a.providers.split(","):
        for mode in a.modes.split(","):
            common = ["--provider", prov, "--poll-mode", mode, "--size", a.size]
            out.append(("fabric/" + prov, "write_bw", mode,
                        ["--test", "write_bw", "--window", str(a.window)] + common))
            out.append(("fabric/" + prov, "stream", mode,
                        ["--test", "stream", "--credits", str(a.credits)] + common))
    out.append(("tcp-socket", "write_bw", "blocking",
                ["--transport", "tcp", "--test", "write_bw", "--size", a.size]))
    for mode in a.modes.split(","):
        out.append(("tcp-socket", "stream", mode,
                    ["--transport", "tcp", "--test", "stream", "--credits", str(a.credits),
                     "--poll-mode", mode, "--size", a.size]))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--size", default="1g")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--providers", default="tcp,shm")
    p.add_argument("--modes", default="performance,auto,economy")
    p.add_argument("--credits", type=int, default=4)
    p.add_argument("--window", type=int, default=16)
    a = p.parse_args()
    perf = os.path.join(a.build, "kvstore-perf")
    if not os.path.exists(perf):
        sys.exit("no %s: build first (make build)" % perf)
    server, port = start_server(perf)
    todo = cases(a)
    results = {c[:3]: [] for c in todo}
    try:
        n, total = 0, len(todo) * a.runs
        for r in range(a.runs):
            for c in todo:
                n += 1
                sys.stderr.write("[%d/%d] run %d: %s %s %s\n" % (n, total, r + 1, *c[:3]))
                results[c[:3]].append(run_client(perf, port, c[3]))
    finally:
        server.kill()
        server.wait()

    def med(key, field):
        return statistics.median(x[field] for x in results[key])

    print("kvstore-perf, %s per run, median of %d runs; stream: %d credits, adaptive chunks "
          "128 KiB..1 MiB; write_bw: window %d, 1 MiB, FI_DELIVERY_COMPLETE"
          % (a.size, a.runs, a.credits, a.window))
    print()
    print("| path | test | poll mode | GB/s | Gbit/s | stream/write_bw | avg chunk | p50 us | "
          "p99 us | client CPU s | server CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in todo:
        key = c[:3]
        gbs = med(key, "gbs")
        ratio = ""
        if c[1] == "stream":
            raw = (c[0], "write_bw", c[2] if c[0] != "tcp-socket" else "blocking")
            if raw in results:
                ratio = "%.2f" % (gbs / med(raw, "gbs"))
        print("| %s | %s | %s | %.2f | %.1f | %s | %d KiB | %.0f | %.0f | %.3f | %.3f |"
              % (c[0], c[1], c[2], gbs, gbs * 8, ratio, med(key, "chunk") // 1024,
                 med(key, "p50"), med(key, "p99"), med(key, "cli_cpu"), med(key, "srv_cpu")))


if __name__ == "__main__":
    main()
