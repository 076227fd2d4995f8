#!/usr/bin/env python3
"""Moving slots between two primaries: redis-cli --cluster reshard on a redis-server pair vs
kvstore's whole-slot migration (CLUSTER MIGRATESLOTS over the data link, shm by default).

Each run builds a two-node cluster of one kind on loopback (node A serves every slot, node B
none), fills A with DEBUG POPULATE (--keys keys of --size bytes), and moves the first
--fraction of the slots to B while a client keeps writing to a key of the moving slots (it
follows MOVED, as a cluster client does). The table gives the medians over --runs runs of the
wall time of the move (until B serves every slot, and until A's copy is deleted: kvstore
deletes it after the hand-over, with writes flowing; redis-cli's MIGRATE deletes as it goes),
and the longest time one of the client's writes took (for kvstore,
also the hand-over's write pause as the source reports it). Redis runs in its fastest
configuration for this job: no persistence, and redis-cli moving --cluster-pipeline keys per
MIGRATE (100 by default; 10 is redis-cli's own default).

Usage: bench/slot_migration_bench.py [--keys 1000000] [--size 1024] [--fraction 0.1]
                                     [--runs 3] [--provider shm] [--pipeline 100] [--build build]
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_bench import ROOT, Server, free_port  # noqa: E402


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    s = key.find(b"{")
    if s >= 0:
        e = key.find(b"}", s + 1)
        if e > s + 1:
            key = key[s + 1:e]
    return crc16(key) % 16384


def command(port, *args):
    out = subprocess.run(["redis-cli", "-p", str(port)] + [str(a) for a in args],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def job_fields(sock):
    """INFO slot_migration's newest job line, as a dict."""
    sock.sendall(b"*2\r\n$4\r\nINFO\r\n$14\r\nslot_migration\r\n")
    buf = b""
    while b"\r\n" not in buf:
        buf += sock.recv(65536)
    size = int(buf[1:buf.index(b"\r\n")])
    body_start = buf.index(b"\r\n") + 2
    while len(buf) < body_start + size + 2:
        buf += sock.recv(65536)
    lines = [ln for ln in buf[body_start:body_start + size].decode().split("\r\n")
             if ln.startswith("slot_migration_") and ":name=" in ln]
    if not lines:
        return {}
    return dict(kv.split("=", 1) for kv in lines[-1].split(":", 1)[1].split(","))


class Writer(threading.Thread):
    """SETs one key of the moving slots in a loop, following MOVED; keeps the longest write."""

    def __init__(self, port, key):
        super().__init__(daemon=True)
        self.port, self.key = port, key
        self.stop = False
        self.longest = 0.0
        self.writes = 0

    def run(self):
        sock = socket.create_connection(("127.0.0.1", self.port))
        n = 0
        while not self.stop:
            n += 1
            val = str(n).encode()
            req = b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
                len(self.key), self.key, len(val), val)
            t0 = time.perf_counter()
            while True:
                sock.sendall(req)
                line = b""
                while not line.endswith(b"\r\n"):
                    line += sock.recv(4096)
                if line.startswith(b"-MOVED"):
                    port = int(line.split()[2].split(b":")[1])
                    sock.close()
                    sock = socket.create_connection(("127.0.0.1", port))
                    continue
                if line.startswith(b"-ASK"):  # this write only, on the importing node
                    port = int(line.split()[2].split(b":")[1])
                    with socket.create_connection(("127.0.0.1", port)) as ask:
                        ask.sendall(b"*1\r\n$6\r\nASKING\r\n" + req)
                        got = b""
                        while got.count(b"\r\n") < 2:
                            got += ask.recv(4096)
                    line = got.split(b"\r\n")[1] + b"\r\n"
                    if line.startswith(b"-TRYAGAIN"):
                        continue
                if not line.startswith(b"+OK"):
                    raise RuntimeError(f"write failed: {line!r}")
                break
            self.longest = max(self.longest, time.perf_counter() - t0)
            self.writes += 1
            time.sleep(0.0005)  # paced: a client's writes, not a load that takes a core
        sock.close()


def two_nodes(kind, build, provider):
    binary = os.path.join(build, "kvstore-server") if kind == "kvstore" else "redis-server"
    extra = ["--repl-rdma-provider", provider] if kind == "kvstore" else []
    bus = [free_port() for _ in range(2)]
    nodes = [Server(f"{kind}-{i}", [binary, "--cluster-enabled", "yes",
                                    "--cluster-config-file", "nodes.conf",
                                    "--cluster-port", str(bus[i]),
                                    "--enable-debug-command", "yes"] + extra)
             for i in range(2)]
    a, b = nodes
    command(a.port, "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    command(b.port, "CLUSTER", "MEET", "127.0.0.1", a.port, bus[0])
    deadline = time.time() + 60
    while not all("cluster_state:ok" in command(n.port, "CLUSTER", "INFO") and
                  command(n.port, "CLUSTER", "NODES").count("connected") == 2 for n in nodes):
        if time.time() > deadline:
            raise RuntimeError(f"{kind} cluster did not come up")
        time.sleep(0.1)
    return nodes


def one_run(kind, a_args):
    a = a_args
    nodes = two_nodes(kind, a.build, a.provider)
    try:
        src, dst = nodes
        command(src.port, "DEBUG", "POPULATE", a.keys, "key", a.size)
        slots = int(16384 * a.fraction)
        wkey = next(k for k in (b"w:%d" % i for i in range(100000)) if key_slot(k) < slots)
        writer = Writer(src.port, wkey)
        writer.start()
        time.sleep(0.5)
        src_id = command(src.port, "CLUSTER", "MYID")
        dst_id = command(dst.port, "CLUSTER", "MYID")
        pause_us = served = None
        t0 = time.perf_counter()
        if kind == "redis":
            r = subprocess.run(["redis-cli", "--cluster", "reshard", f"127.0.0.1:{src.port}",
                                "--cluster-from", src_id, "--cluster-to", dst_id,
                                "--cluster-slots", str(slots), "--cluster-yes",
                                "--cluster-pipeline", str(a.pipeline)],
                               capture_output=True, text=True, timeout=3600)
            if r.returncode != 0:
                raise RuntimeError("reshard failed: " + r.stdout[-2000:] + r.stderr[-2000:])
        else:
            command(src.port, "CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", 0, slots - 1,
                    "NODE", dst_id)
            # Polled over one connection (a redis-cli per poll would take the cores it measures).
            with socket.create_connection(("127.0.0.1", src.port)) as poll:
                while True:
                    fields = job_fields(poll)
                    if fields.get("state") == "success" and served is None:
                        served = time.perf_counter() - t0
                    # Done once the target serves the slots and this node's copy is deleted.
                    if fields.get("state") in ("failed", "cancelled") or (
                            fields.get("state") == "success" and fields.get("deleting") == "0"):
                        break
                    time.sleep(0.01)
            if fields["state"] != "success":
                raise RuntimeError("migration failed: " + fields.get("message", ""))
            pause_us = int(fields["pause_us"])
        wall = time.perf_counter() - t0
        if served is None:  # redis-cli: the last slot is served by B when it ends
            served = wall
        time.sleep(0.3)
        writer.stop = True
        writer.join()
        moved = int(command(dst.port, "DBSIZE"))
        return wall, writer.longest, pause_us, moved, served
    finally:
        for n in nodes:
            n.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--provider", default="shm")
    ap.add_argument("--pipeline", type=int, default=100)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    results = {"kvstore": [], "redis": []}
    for run in range(a.runs):
        for kind in ("redis", "kvstore"):
            print(f"run {run + 1}/{a.runs}: {kind}: filling {a.keys} keys of {a.size} bytes, "
                  f"moving {a.fraction:.0%} of the slots...", flush=True)
            r = one_run(kind, a)
            results[kind].append(r)
            extra = f", hand-over pause {r[2] / 1000:.1f} ms" if r[2] is not None else ""
            print(f"  {r[0]:.2f} s ({r[4]:.2f} s until B served every slot), {r[3]} keys moved, "
                  f"longest write {r[1] * 1000:.1f} ms{extra}", flush=True)
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v),
               statistics.median(x[4] for x in v))
           for k, v in results.items()}
    pause = statistics.median(x[2] for x in results["kvstore"]) / 1000
    print()
    print(f"{a.keys} keys of {a.size} bytes, {a.fraction:.0%} of the slots moved, medians of "
          f"{a.runs} runs (kvstore over {a.provider}; redis-cli --cluster-pipeline {a.pipeline})")
    print("| | until B serves the slots | until A's copy is deleted | longest write | "
          "hand-over pause |")
    print("|---|---|---|---|---|")
    print(f"| redis-cli --cluster reshard | {med['redis'][2]:.2f} s | {med['redis'][0]:.2f} s | "
          f"{med['redis'][1] * 1000:.1f} ms | - |")
    print(f"| kvstore MIGRATESLOTS | {med['kvstore'][2]:.2f} s | {med['kvstore'][0]:.2f} s | "
          f"{med['kvstore'][1] * 1000:.1f} ms | {pause:.1f} ms |")
    print(f"| redis/kvstore | {med['redis'][2] / med['kvstore'][2]:.1f}x | "
          f"{med['redis'][0] / med['kvstore'][0]:.1f}x | | |")


if __name__ == "__main__":
    main()
