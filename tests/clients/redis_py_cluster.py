"""redis-py's RedisCluster against a Redis Cluster while the cluster changes under it: the test
harness reshards slots and fails a primary over while this program writes and reads. Every
operation must succeed (redis-py follows MOVED and ASK, retries TRYAGAIN, CLUSTERDOWN and
connection errors), every read must return what was last written, and at the end every key must
hold its last written value.

The program writes each key once, creates DIR/ready, then runs rounds until DIR/stop exists. A
round sets and reads back a window of the keys one by one, sets another window in a pipeline,
writes and reads groups of keys sharing a hash tag with MSET and MGET, and increments counters;
after each round DIR/progress holds the number of rounds done. Then it reads every key back and
prints "ok" and what it did. A failure prints what went wrong and exits 1; a redis-py without
RedisCluster exits 77.
usage: redis_py_cluster.py PORT DIR"""
import logging
import os
import sys
import time

import redis

try:
    from redis.cluster import ClusterNode, RedisCluster
except ImportError:
    print(f"redis-py {redis.__version__} has no RedisCluster")
    sys.exit(77)

KEYS = 3000  # plain keys, across all slots
WINDOW = 150  # keys set one by one per round
PIPELINED = 100  # keys set in one pipeline per round
GROUPS = 20  # hash-tag groups
GROUP_SIZE = 4  # keys per group, written together with MSET
COUNTERS = 20  # INCR counters
MAX_SECONDS = 600  # gives up when the harness never says stop


class Redirections(logging.Handler):
    """Counts what redis-py's cluster client logs as it retries (MovedError, AskError, ...)."""

    def __init__(self):
        super().__init__()
        self.counts = {}

    def emit(self, record):
        msg = record.msg
        if isinstance(msg, type):  # log.exception(type(e)) for lost connections and timeouts
            name = msg.__name__
        elif str(msg).startswith("An exception occurred during pipeline"):
            name = "PipelineRetry"
        else:
            name = str(msg).split(":")[0]
        self.counts[name] = self.counts.get(name, 0) + 1


def fail(what):
    print("FAILED: " + what, flush=True)
    sys.exit(1)


def write_progress(path, rounds):
    with open(path + ".tmp", "w") as f:
        f.write(str(rounds))
    os.replace(path + ".tmp", path)


def key(i):
    return f"key:{i}"


def group_keys(g):
    return [f"{{group:{g}}}:{k}" for k in range(GROUP_SIZE)]


def main():
    port, work = int(sys.argv[1]), sys.argv[2]
    counted = Redirections()
    log = logging.getLogger("redis.cluster")
    log.addHandler(counted)
    log.propagate = False  # its retries are counted, not printed

    rc = RedisCluster(
        startup_nodes=[ClusterNode("127.0.0.1", port)],
        decode_responses=True,
        cluster_error_retry_attempts=40,  # each waits 0.25 s on CLUSTERDOWN or a lost connection
        socket_timeout=60,  # a node may stall a while on a loaded machine
        socket_connect_timeout=10,
    )
    rc.RedisClusterRequestTTL = 64  # redirections and TRYAGAIN retries per command

    last = {}  # key -> its last written value
    counters = {}  # counter key -> the last INCR reply
    jumps = 0  # INCR replies more than one above the one before

    def mset_group(g, rnd):
        values = {k: f"{k}={rnd}" for k in group_keys(g)}
        if rc.mset(values) is not True:
            fail(f"MSET of group {g}")
        last.update(values)

    # Every key once.
    for i in range(KEYS):
        if rc.set(key(i), f"v{i}:0") is not True:
            fail(f"SET {key(i)}")
        last[key(i)] = f"v{i}:0"
    for g in range(GROUPS):
        mset_group(g, 0)
    for c in range(COUNTERS):
        rc.delete(f"counter:{c}")
        counters[f"counter:{c}"] = 0
    open(os.path.join(work, "ready"), "w").close()

    started = time.monotonic()
    rounds = 0
    ops = 0
    while not os.path.exists(os.path.join(work, "stop")):
        if time.monotonic() - started > MAX_SECONDS:
            fail(f"no stop file after {MAX_SECONDS} s")
        rounds += 1
        base = (rounds * (WINDOW + PIPELINED)) % KEYS
        # One by one, each read back at once.
        for j in range(WINDOW):
            i = (base + j) % KEYS
            v = f"v{i}:{rounds}"
            if rc.set(key(i), v) is not True:
                fail(f"SET {key(i)} {v}")
            last[key(i)] = v
            got = rc.get(key(i))
            if got != v:
                fail(f"GET {key(i)} right after SET {v}: {got!r}")
            ops += 2
        # A pipeline across slots and nodes.
        pipe = rc.pipeline()
        written = []
        for j in range(PIPELINED):
            i = (base + WINDOW + j) % KEYS
            v = f"p{i}:{rounds}"
            pipe.set(key(i), v)
            written.append((key(i), v))
        replies = pipe.execute()
        if replies != [True] * PIPELINED:
            fail(f"pipeline of {PIPELINED} SETs: {replies!r}")
        last.update(written)
        ops += PIPELINED
        # Groups of one hash tag: MSET, then MGET sees all of it.
        for g in range(GROUPS):
            mset_group(g, rounds)
            keys = group_keys(g)
            got = rc.mget(keys)
            if got != [last[k] for k in keys]:
                fail(f"MGET {keys}: {got!r}, not {[last[k] for k in keys]!r}")
            ops += 2
        # Counters.
        for c in range(COUNTERS):
            k = f"counter:{c}"
            n = rc.incr(k)
            if n <= counters[k]:
                fail(f"INCR {k}: {n} after {counters[k]}")
            if n > counters[k] + 1:
                jumps += 1
            counters[k] = n
            ops += 1
        write_progress(os.path.join(work, "progress"), rounds)

    # Every key holds what was last written to it (read in one pipeline), every counter its last
    # INCR's reply.
    names = sorted(last)
    pipe = rc.pipeline()
    for k in names:
        pipe.get(k)
    got = pipe.execute()
    wrong = [(k, g, last[k]) for k, g in zip(names, got) if g != last[k]]
    if wrong:
        fail(f"{len(wrong)} keys lost their last value, e.g. (key, has, wrote) {wrong[:5]}")
    for k, n in counters.items():
        got = rc.get(k)
        if got != str(n):
            fail(f"{k} is {got!r}, the last INCR said {n}")
    lost_connections = counted.counts.get("ConnectionError", 0) + counted.counts.get(
        "TimeoutError", 0
    )
    # A retried INCR may count twice only when a connection was lost after the server had it.
    if jumps and not lost_connections:
        fail(f"{jumps} INCR replies skipped a number with no connection lost")
    retries = " ".join(f"{k}={v}" for k, v in sorted(counted.counts.items()))
    print(
        f"ok: redis-py {redis.__version__}, {rounds} rounds, {ops} operations, "
        f"{len(last) + len(counters)} keys checked; retries: {retries or 'none'}",
        flush=True,
    )
    rc.close()


main()
