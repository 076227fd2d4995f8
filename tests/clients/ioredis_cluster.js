// ioredis' Cluster against a Redis Cluster while the cluster changes under it: the test harness
// reshards slots and fails a primary over while this program writes and reads. Every command
// must succeed (ioredis follows MOVED and ASK and retries TRYAGAIN, CLUSTERDOWN and lost
// connections), every read must return what was last written, and at the end every key must hold
// its last written value.
//
// The program writes each key once, creates DIR/ready, then runs rounds until DIR/stop exists. A
// round sets a window of the keys (many commands in flight at once) and reads them back, sets
// groups of keys sharing a hash tag in pipelines (a pipeline must stay on one node in ioredis),
// writes and reads other groups with MSET and MGET, and increments counters; after each round
// DIR/progress holds the number of rounds done. Then it reads every key back and prints "ok" and
// what it did. A failure prints what went wrong and exits 1.
// usage: node ioredis_cluster.js PORT DIR
const fs = require('fs');
const path = require('path');
const Redis = require('ioredis');

const KEYS = 3000;         // plain keys, across all slots
const WINDOW = 300;        // keys set per round, all in flight together
const PIPELINES = 10;      // one-tag pipelines per round
const PIPELINE_SIZE = 8;   // keys per pipeline
const GROUPS = 20;         // hash-tag groups for MSET and MGET
const GROUP_SIZE = 4;      // keys per group
const COUNTERS = 20;       // INCR counters
const MAX_SECONDS = 600;   // gives up when the harness never says stop

const port = Number(process.argv[2]);
const work = process.argv[3];

function fail(what) {
  console.log('FAILED: ' + what);
  process.exit(1);
}

const key = (i) => `key:${i}`;
const pipeKeys = (p) => Array.from({length: PIPELINE_SIZE}, (_, k) => `{pipe:${p}}:${k}`);
const groupKeys = (g) => Array.from({length: GROUP_SIZE}, (_, k) => `{group:${g}}:${k}`);

// A redirection a pipeline may return for some of its commands when its slot moves halfway
// through it (ioredis retries a pipeline only when all its commands fail alike).
const redirection = (err) => /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /.test(err.message);

async function main() {
  const cluster = new Redis.Cluster([{host: '127.0.0.1', port}], {
    maxRedirections: 64,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 50,
    slotsRefreshTimeout: 10000,  // a node may stall a while on a loaded machine
    clusterRetryStrategy: (times) => (times > 100 ? null : Math.min(100 * times, 2000)),
    redisOptions: {connectTimeout: 10000, maxRetriesPerRequest: 100},
  });
  const nodeErrors = [];  // errors a node's connection reported (ioredis reconnects)
  cluster.on('node error', (e, node) => nodeErrors.push(`${node}: ${e.message || e}`));
  cluster.on('error', (e) => nodeErrors.push(String(e.message || e)));
  let refreshes = 0;
  cluster.on('refresh', () => refreshes++);

  const last = new Map();      // key -> its last written value
  const counters = new Map();  // counter key -> the last INCR reply
  let ops = 0, pipelineRetries = 0;
  let jumps = 0;               // INCR replies more than one above the one before

  async function setAll(pairs) {
    const replies = await Promise.all(pairs.map(([k, v]) => cluster.set(k, v)));
    replies.forEach((r, j) => {
      if (r !== 'OK') fail(`SET ${pairs[j][0]}: ${r}`);
    });
    for (const [k, v] of pairs) last.set(k, v);
    ops += pairs.length;
  }

  async function msetGroup(g, round) {
    const pairs = groupKeys(g).map((k) => [k, `${k}=${round}`]);
    const r = await cluster.mset(...pairs.flat());
    if (r !== 'OK') fail(`MSET group ${g}: ${r}`);
    for (const [k, v] of pairs) last.set(k, v);
    ops++;
  }

  // SETs of one hash tag in one pipeline; commands that came back redirected are sent again
  // one by one.
  async function pipelineSets(p, round) {
    const pairs = pipeKeys(p).map((k) => [k, `${k}@${round}`]);
    const pipe = cluster.pipeline();
    for (const [k, v] of pairs) pipe.set(k, v);
    const results = await pipe.exec();
    for (let j = 0; j < pairs.length; j++) {
      const [err, r] = results[j];
      if (err) {
        if (!redirection(err)) fail(`pipelined SET ${pairs[j][0]}: ${err.message}`);
        pipelineRetries++;
        const again = await cluster.set(...pairs[j]);
        if (again !== 'OK') fail(`SET ${pairs[j][0]} again: ${again}`);
      } else if (r !== 'OK') {
        fail(`pipelined SET ${pairs[j][0]}: ${r}`);
      }
      last.set(...pairs[j]);
    }
    ops += pairs.length;
  }

  // Every key once.
  for (let b = 0; b < KEYS; b += WINDOW) {
    const pairs = [];
    for (let i = b; i < Math.min(KEYS, b + WINDOW); i++) pairs.push([key(i), `v${i}:0`]);
    await setAll(pairs);
  }
  for (let p = 0; p < PIPELINES; p++) await pipelineSets(p, 0);
  for (let g = 0; g < GROUPS; g++) await msetGroup(g, 0);
  for (let c = 0; c < COUNTERS; c++) {
    await cluster.del(`counter:${c}`);
    counters.set(`counter:${c}`, 0);
  }
  fs.closeSync(fs.openSync(path.join(work, 'ready'), 'w'));

  const started = Date.now();
  let rounds = 0;
  while (!fs.existsSync(path.join(work, 'stop'))) {
    if (Date.now() - started > MAX_SECONDS * 1000) fail(`no stop file after ${MAX_SECONDS} s`);
    rounds++;
    // A window of keys, all in flight together, then read back.
    const base = (rounds * WINDOW) % KEYS;
    const pairs = [];
    for (let j = 0; j < WINDOW; j++) {
      const i = (base + j) % KEYS;
      pairs.push([key(i), `v${i}:${rounds}`]);
    }
    await setAll(pairs);
    const got = await Promise.all(pairs.map(([k]) => cluster.get(k)));
    pairs.forEach(([k, v], j) => {
      if (got[j] !== v) fail(`GET ${k} right after SET ${v}: ${got[j]}`);
    });
    ops += pairs.length;
    // Pipelines, one hash tag each.
    await Promise.all(Array.from({length: PIPELINES}, (_, p) => pipelineSets(p, rounds)));
    // MSET, then MGET sees all of it.
    for (let g = 0; g < GROUPS; g++) {
      await msetGroup(g, rounds);
      const keys = groupKeys(g);
      const values = await cluster.mget(...keys);
      const want = keys.map((k) => last.get(k));
      if (JSON.stringify(values) !== JSON.stringify(want)) {
        fail(`MGET ${keys}: ${JSON.stringify(values)}, not ${JSON.stringify(want)}`);
      }
      ops++;
    }
    // Counters, one INCR each, all in flight together.
    const names = [...counters.keys()];
    const ns = await Promise.all(names.map((k) => cluster.incr(k)));
    names.forEach((k, j) => {
      if (!(ns[j] > counters.get(k))) fail(`INCR ${k}: ${ns[j]} after ${counters.get(k)}`);
      if (ns[j] > counters.get(k) + 1) jumps++;
      counters.set(k, ns[j]);
    });
    ops += names.length;
    const progress = path.join(work, 'progress');
    fs.writeFileSync(progress + '.tmp', String(rounds));
    fs.renameSync(progress + '.tmp', progress);
  }

  // Every key holds what was last written to it.
  const names = [...last.keys()];
  const wrong = [];
  for (let b = 0; b < names.length; b += 500) {
    const chunk = names.slice(b, b + 500);
    const got = await Promise.all(chunk.map((k) => cluster.get(k)));
    chunk.forEach((k, j) => {
      if (got[j] !== last.get(k)) wrong.push([k, got[j], last.get(k)]);
    });
  }
  if (wrong.length) {
    fail(`${wrong.length} keys lost their last value, e.g. (key, has, wrote) ` +
         JSON.stringify(wrong.slice(0, 5)));
  }
  for (const [k, n] of counters) {
    const got = await cluster.get(k);
    if (got !== String(n)) fail(`${k} is ${got}, the last INCR said ${n}`);
  }
  // A retried INCR may count twice only when a connection was lost after the server had it.
  if (jumps && !nodeErrors.length) {
    fail(`${jumps} INCR replies skipped a number with no connection lost`);
  }
  const version = require('ioredis/package.json').version;
  console.log(`ok: ioredis ${version}, ${rounds} rounds, ${ops} operations, ` +
              `${last.size + counters.size} keys checked; ${refreshes} slot refreshes, ` +
              `${pipelineRetries} pipelined commands sent again, ` +
              `${nodeErrors.length} connection errors ${JSON.stringify(nodeErrors.slice(0, 3))}`);
  cluster.disconnect();
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
