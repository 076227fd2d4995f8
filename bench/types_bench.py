#!/usr/bin/env python3
"""Commands of the data types redis-benchmark has no built-in test for: kvstore vs redis-server
in the same run.

Each case is a command line given to redis-benchmark (its __rand_int__ placeholder becomes a
zero-padded random number below -r 1000000 for every request, so it can name keys but not
offsets: both servers refuse "000123" as a bit offset), run at each pipeline depth against both
servers, alternating which goes first; median requests/second of --runs runs. Both servers run
with their defaults (no persistence); this job has no Redis setting that speeds it up.

Cases (--cases, comma-separated names):
  setbit     SETBIT bm:__rand_int__ 1000 1     (up to 1M bitmaps of 126 bytes)
  getbit     GETBIT bm:__rand_int__ 1000
  bitcount   BITCOUNT bitmap 0 -1              (one bitmap of 125 KB)
  bitcount-r BITCOUNT bitmap 1000 -1000 BIT    (the same with edge bits)
  bitfield   BITFIELD bf:__rand_int__ INCRBY u8 100 1
  pfadd      PFADD hll el:__rand_int__          (one HLL, dense after the first few thousand)
  pfcount    PFCOUNT hll                        (the cached count, stale after every new element)
  pfcount3   PFCOUNT hll hll2 hll3              (the union of three dense HLLs)
  geoadd     GEOADD geo 13.__rand_int__ 38.__rand_int__ m:__rand_int__   (one set, up to 1M points)
  geosearch  GEOSEARCH geopts FROMLONLAT 13.__rand_int__ 38.__rand_int__ BYRADIUS 1 km ASC WITHDIST
  geobox     GEOSEARCH geopts FROMLONLAT ... BYBOX 3 3 km COUNT 10 WITHCOORD
             (geopts: 100,000 points spread over 1 x 1 degree north-east of 13, 38; the zero-padded
             __rand_int__ puts every centre within a metre of that corner, where a 1 km circle
             holds about 8 points and the 3 km box about 23)
  xadd       XADD events * f __rand_int__           (one stream, auto IDs)
  xrange     XRANGE feed - + COUNT 10               (feed: 100,000 entries of two fields)
  xread      XREAD COUNT 10 STREAMS feed 0-0
  xreadgroup XREADGROUP GROUP g c COUNT 1 STREAMS feed >  (the group set back to 0 before each run)
  evalsha    EVALSHA <sha> 1 c:__rand_int__       (a loaded script: INCR and GET of one key)
  fcall      FCALL incr_get 1 c:__rand_int__      (the same as a function)

--memory N measures instead the memory a stream of N entries (XADD s * f __rand_int__, one
12-digit value per entry) takes on each server: used_memory and RSS growth, per entry.

Usage: bench/types_bench.py [--runs 5] [--requests 200000] [--pipelines 1,16] [--cases ...]
       bench/types_bench.py --memory 1000000
"""
import argparse
import hashlib
import os
import random
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from redis_bench import ROOT, Server  # noqa: E402

# The script of the evalsha case (loaded on both servers first): INCR and GET of one key.
INCR_GET = "redis.call('incr', KEYS[1]) return redis.call('get', KEYS[1])"
# The same as a function library (loaded on both servers first), for the fcall case.
INCR_GET_LIB = ("#!lua name=bench\nredis.register_function('incr_get', function(keys) "
                "redis.call('incr', keys[1]) return redis.call('get', keys[1]) end)")

CASES = {
    "setbit": ["SETBIT", "bm:__rand_int__", "1000", "1"],
    "getbit": ["GETBIT", "bm:__rand_int__", "1000"],
    "bitcount": ["BITCOUNT", "bitmap", "0", "-1"],
    "bitcount-r": ["BITCOUNT", "bitmap", "1000", "-1000", "BIT"],
    "bitfield": ["BITFIELD", "bf:__rand_int__", "INCRBY", "u8", "100", "1"],
    "pfadd": ["PFADD", "hll", "el:__rand_int__"],
    "pfcount": ["PFCOUNT", "hll"],
    "pfcount3": ["PFCOUNT", "hll", "hll2", "hll3"],
    "geoadd": ["GEOADD", "geo", "13.__rand_int__", "38.__rand_int__", "m:__rand_int__"],
    "geosearch": ["GEOSEARCH", "geopts", "FROMLONLAT", "13.__rand_int__", "38.__rand_int__",
                  "BYRADIUS", "1", "km", "ASC", "WITHDIST"],
    "geobox": ["GEOSEARCH", "geopts", "FROMLONLAT", "13.__rand_int__", "38.__rand_int__",
               "BYBOX", "3", "3", "km", "COUNT", "10", "WITHCOORD"],
    "xadd": ["XADD", "events", "*", "f", "__rand_int__"],
    "xrange": ["XRANGE", "feed", "-", "+", "COUNT", "10"],
    "xread": ["XREAD", "COUNT", "10", "STREAMS", "feed", "0-0"],
    "xreadgroup": ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "feed", ">"],
    "evalsha": ["EVALSHA", hashlib.sha1(INCR_GET.encode()).hexdigest(), "1", "c:__rand_int__"],
    "fcall": ["FCALL", "incr_get", "1", "c:__rand_int__"],
}


def used_memory(srv):
    for line in srv.command("INFO", "memory").splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    return 0


def memory(opts):
    """Bytes per stream entry on each server, medians of --runs fills."""
    rows = {}
    for run_i in range(opts.runs):
        for name in ("kvstore", "redis") if run_i % 2 == 0 else ("redis", "kvstore"):
            argv = [os.path.join(opts.build, "kvstore-server")] if name == "kvstore" else \
                ["redis-server", "--appendonly", "no"]
            srv = Server(name, argv)
            try:
                m0, r0 = used_memory(srv), srv.rss_kb()
                subprocess.run(["redis-benchmark", "-p", str(srv.port), "-c", "10", "-n",
                                str(opts.memory), "-r", "1000000", "-P", "64", "XADD", "s", "*",
                                "f", "__rand_int__"], capture_output=True, check=True)
                n = int(srv.command("XLEN", "s"))
                m1, r1 = used_memory(srv), srv.rss_kb()
                rows.setdefault(name, []).append(((m1 - m0) / n, (r1 - r0) * 1024 / n))
                print(f"[{run_i + 1}/{opts.runs}] {name}: {n} entries, "
                      f"{(m1 - m0) / n:.1f} B/entry used_memory", file=sys.stderr, flush=True)
            finally:
                srv.close()
    print(f"\nStream of {opts.memory:,} entries (XADD s * f <12 digits>), median of {opts.runs}")
    print(f"{'':<22}{'kvstore':>10}{'redis':>10}{'ratio':>8}")
    for i, what in enumerate(("used_memory B/entry", "RSS B/entry")):
        kv = statistics.median(r[i] for r in rows["kvstore"])
        rd = statistics.median(r[i] for r in rows["redis"])
        print(f"{what:<22}{kv:>10.1f}{rd:>10.1f}{kv / rd:>8.2f}")


def run(port, argv, pipeline, requests, clients):
    args = ["redis-benchmark", "-p", str(port), "-c", str(clients), "-n", str(requests),
            "-r", "1000000", "-P", str(pipeline), "--csv"] + argv
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    lines = [line for line in out.splitlines() if line and not line.startswith('"test"')]
    return float(lines[-1].split(",")[1].strip('"'))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000, help="redis-benchmark -n (x4 at P16)")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipelines", default="1,16")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--memory", type=int, default=0, help="measure bytes per stream entry")
    opts = ap.parse_args()
    if opts.memory:
        memory(opts)
        return
    cases = [c for c in opts.cases.split(",") if c]
    pipelines = [int(p) for p in opts.pipelines.split(",")]
    servers = {"kvstore": Server("kvstore", [os.path.join(opts.build, "kvstore-server")]),
               "redis": Server("redis", ["redis-server", "--appendonly", "no"])}
    results = {}
    try:
        for srv in servers.values():
            srv.command("SETBIT", "bitmap", "999999", "1")  # 125 KB
            for off in range(0, 1000000, 7919):
                srv.command("SETBIT", "bitmap", str(off), "1")
            for key in ("hll", "hll2", "hll3"):
                srv.command("PFADD", key, *[f"{key}-{i}" for i in range(5000)])
            if any(c in ("xrange", "xread", "xreadgroup") for c in cases):
                n = "300000" if "xreadgroup" in cases else "100000"
                subprocess.run(["redis-benchmark", "-p", str(srv.port), "-c", "10", "-n", n,
                                "-r", "1000000", "-P", "64", "XADD", "feed", "*", "f", "v", "n",
                                "__rand_int__"], capture_output=True, check=True)
                srv.command("XGROUP", "CREATE", "feed", "g", "0")
            srv.command("SCRIPT", "LOAD", INCR_GET)
            srv.command("FUNCTION", "LOAD", "REPLACE", INCR_GET_LIB)
            if any(c.startswith("geo") for c in cases):
                rng = random.Random(7)
                for batch in range(100):
                    args = []
                    for i in range(1000):
                        args += [f"{13 + rng.random():.6f}", f"{38 + rng.random():.6f}",
                                 f"p{batch * 1000 + i}"]
                    srv.command("GEOADD", "geopts", *args)
        total, done = len(cases) * len(pipelines) * opts.runs * 2, 0
        for case in cases:
            for p in pipelines:
                n = opts.requests * (4 if p > 1 else 1)
                for run_i in range(opts.runs):
                    for name in ("kvstore", "redis") if run_i % 2 == 0 else ("redis", "kvstore"):
                        if case == "xreadgroup":
                            servers[name].command("XGROUP", "SETID", "feed", "g", "0")
                        rps = run(servers[name].port, CASES[case], p, n, opts.clients)
                        results.setdefault((case, p, name), []).append(rps)
                        done += 1
                        print(f"[{done}/{total}] {case} P{p} {name}: {rps:,.0f} req/s",
                              file=sys.stderr, flush=True)
    finally:
        for srv in servers.values():
            srv.close()
    print(f"\nredis-benchmark -c {opts.clients} -r 1000000, median of {opts.runs} runs")
    print(f"{'case':<12}{'pipeline':>9}{'kvstore req/s':>16}{'redis req/s':>14}{'ratio':>8}")
    for case in cases:
        for p in pipelines:
            kv = statistics.median(results[(case, p, "kvstore")])
            rd = statistics.median(results[(case, p, "redis")])
            print(f"{case:<12}{p:>9}{kv:>16,.0f}{rd:>14,.0f}{kv / rd:>8.2f}")


if __name__ == "__main__":
    main()
