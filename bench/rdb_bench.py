#!/usr/bin/env python3
"""SAVE and load times of kvstore vs redis-server on the same dataset.

Generates an RDB file of --keys keys holding --size random bytes each (by default 1,000,000 x
1,000 bytes, about 1 GB), then, for each server and each rdbcompression setting, --runs times
(alternating which server goes first):
  * load: copies the file in as dump.rdb, starts the server, reads the load time it logs
    ("DB loaded from disk: X seconds", both servers log it);
  * save: times a SAVE command from the client (the file is written, fsynced and renamed).
Prints medians and kvstore/Redis ratios (above 1: kvstore is faster). Progress goes to stderr.

Usage: python3 bench/rdb_bench.py [--keys N] [--size BYTES] [--runs R] [--build DIR]
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def write_dataset(path, keys, size):
    """An RDB v10 file of `keys` string keys with random values; checksum 0 (not verified)."""
    with open(path, "wb") as f:
        f.write(b"REDIS0010")
        f.write(b"\xfe\x00\xfb" + rdb_len(keys) + rdb_len(0))
        chunk = []
        rnd = os.urandom(size * 4096)
        for i in range(keys):
            key = b"key:%d" % i
            off = (i * 7919) % (len(rnd) - size)
            # Fresh randomness every 4096 keys keeps values distinct and incompressible.
            if i % 4096 == 0:
                rnd = os.urandom(size * 4096)
            chunk.append(b"\x00" + rdb_len(len(key)) + key + rdb_len(size) + rnd[off:off + size])
            if len(chunk) >= 4096:
                f.write(b"".join(chunk))
                chunk = []
            if i % 100000 == 0:
                log(f"  generating dataset: {i}/{keys} keys")
        f.write(b"".join(chunk))
        f.write(b"\xff" + b"\x00" * 8)


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        while b"\r\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise RuntimeError("connection closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\r\n", 1)
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None  # a nil reply
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(65536)
            val, self.buf = self.buf[:n], self.buf[n + 2:]
            return val.decode()
        return line[1:].decode()


def start(kind, build, dirname, compression):
    port = free_port()
    logfile = os.path.join(dirname, "server.log")
    if kind == "kvstore":
        cmd = [os.path.join(build, "kvstore-server")]
    else:
        cmd = ["redis-server", "--appendonly", "no"]
    cmd += ["--port", str(port), "--dir", dirname, "--save", "", "--logfile", logfile,
            "--rdbcompression", compression]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while time.time() < deadline:
        if os.path.exists(logfile):
            text = open(logfile).read()
            m = re.search(r"DB loaded from disk: ([0-9.]+) seconds", text)
            if m and "Ready to accept connections" in text:
                try:
                    c = Client(port)
                    if c.call("PING") == "PONG":
                        return proc, c, float(m.group(1))
                except OSError:
                    pass
        if proc.poll() is not None:
            raise RuntimeError(f"{kind} exited: " + open(logfile).read()[-2000:])
        time.sleep(0.05)
    raise RuntimeError(f"{kind} did not load the dataset in time")


def measure(kind, build, dataset, compression, workdir):
    d = tempfile.mkdtemp(dir=workdir, prefix=kind + "-")
    shutil.copyfile(dataset, os.path.join(d, "dump.rdb"))
    proc, c, load_s = start(kind, build, d, compression)
    keys = int(c.call("DBSIZE"))
    t0 = time.monotonic()
    reply = c.call("SAVE")
    save_s = time.monotonic() - t0
    if reply != "OK":
        raise RuntimeError(f"{kind} SAVE: {reply}")
    size = os.path.getsize(os.path.join(d, "dump.rdb"))
    try:
        c.call("SHUTDOWN", "NOSAVE")  # answers by closing the connection
    except (RuntimeError, OSError):
        pass
    proc.wait(timeout=60)
    shutil.rmtree(d)
    return load_s, save_s, keys, size


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="kvstore-rdb-bench-")
    try:
        dataset = os.path.join(workdir, "dataset.rdb")
        log(f"generating {args.keys} keys x {args.size} random bytes")
        write_dataset(dataset, args.keys, args.size)
        results = {}
        for compression in ("no", "yes"):
            for run in range(args.runs):
                order = ("kvstore", "redis") if run % 2 == 0 else ("redis", "kvstore")
                for kind in order:
                    load_s, save_s, keys, size = measure(kind, args.build, dataset, compression, workdir)
                    if keys != args.keys:
                        raise RuntimeError(f"{kind} loaded {keys} keys, expected {args.keys}")
                    log(f"  rdbcompression {compression} run {run + 1}/{args.runs} {kind:8s}: "
                        f"load {load_s:.3f} s, SAVE {save_s:.3f} s, file {size / 1e6:.0f} MB")
                    r = results.setdefault((compression, kind), {"load": [], "save": []})
                    r["load"].append(load_s)
                    r["save"].append(save_s)
        print(f"\nRDB SAVE and load: {args.keys} keys x {args.size} random bytes, medians of {args.runs}")
        print(f"{'rdbcompression':>14} {'op':>5} {'kvstore s':>10} {'redis s':>9} {'speedup':>8}")
        for compression in ("no", "yes"):
            for op in ("save", "load"):
                k = statistics.median(results[(compression, "kvstore")][op])
                r = statistics.median(results[(compression, "redis")][op])
                print(f"{compression:>14} {op:>5} {k:10.3f} {r:9.3f} {r / k:7.2f}x")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
