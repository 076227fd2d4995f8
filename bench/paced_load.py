#!/usr/bin/env python3
"""A write load at a fixed rate: SET of random keys (100-byte values) in pipelines of 16 on one
connection, paced to --rate commands per second until killed (or --seconds pass). Unlike
redis-benchmark's closed loop, the offered load does not depend on how fast the server is, so
servers (or transports) are compared under the same load. Prints the rate it reached at exit
when it falls behind.

Usage: python3 bench/paced_load.py --port N --rate N [--keys N] [--seconds S]
"""
import argparse
import random
import signal
import socket
import sys
import time

PIPELINE = 16


def batch(rng, keys, value):
    out = []
    for _ in range(PIPELINE):
        key = f"k:{rng.randrange(keys)}".encode()
        out.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(value), value))
    return b"".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--rate", type=int, required=True, help="SET commands per second")
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--seconds", type=float, default=0, help="0: until killed")
    args = ap.parse_args()
    rng = random.Random(1)
    value = b"x" * 100
    batches = [batch(rng, args.keys, value) for _ in range(256)]
    reply = b"+OK\r\n" * PIPELINE
    sock = socket.create_connection(("127.0.0.1", args.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    interval = PIPELINE / args.rate
    start = time.perf_counter()
    sent = 0
    while not stop:
        now = time.perf_counter()
        if args.seconds and now - start >= args.seconds:
            break
        due = int((now - start) / interval) + 1
        if sent >= due:
            time.sleep(min(interval, start + sent * interval - now))
            continue
        # One batch in flight at a time: its replies come back before the next goes out.
        sock.sendall(batches[sent % len(batches)])
        got = 0
        while got < len(reply):
            chunk = sock.recv(65536)
            if not chunk:
                sys.exit("server closed the connection")
            got += len(chunk)
        sent += 1
    elapsed = time.perf_counter() - start
    if sent * PIPELINE < 0.95 * args.rate * elapsed:
        print(f"paced_load: reached {sent * PIPELINE / elapsed:.0f} of {args.rate} SET/s",
              file=sys.stderr)


if __name__ == "__main__":
    main()
