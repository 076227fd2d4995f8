// node-redis' client-side cache (RESP3, CLIENT TRACKING) against kvstore: a GET is served from
// the cache the second time; a SET from another connection invalidates it, and the next GET
// fetches the new value; a FLUSHALL (the server's null invalidation) empties the cache. Prints
// each step and "ok"; exits non-zero on a mismatch.
// usage: node node_redis_cache.js PORT
const assert = require('assert');
const {createClient, BasicClientSideCache} = require('redis');

// Resolves once `cond` holds (the invalidation is a push that arrives on its own); rejects
// after `ms`, far beyond the milliseconds it takes.
async function waitFor(cond, what, ms = 10000) {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function main() {
  const port = Number(process.argv[2]);
  const cache = new BasicClientSideCache({ttl: 0, maxEntries: 0, evictPolicy: 'LRU'});
  const cached = createClient({socket: {port}, RESP: 3, clientSideCache: cache});
  const other = createClient({socket: {port}});
  await cached.connect();
  await other.connect();
  await other.flushAll();
  await other.set('k', 'v1');

  const first = await cached.get('k');
  const second = await cached.get('k');
  console.log(`get: ${first} then ${second}; hits=${cache.stats().hitCount} ` +
              `misses=${cache.stats().missCount} size=${cache.size()}`);
  assert.strictEqual(first, 'v1');
  assert.strictEqual(second, 'v1');
  assert.strictEqual(cache.stats().missCount, 1);
  assert.strictEqual(cache.stats().hitCount, 1);  // the second GET never reached the server
  assert.strictEqual(cache.size(), 1);

  await other.set('k', 'v2');
  await waitFor(() => cache.size() === 0, 'the invalidation of k');
  const third = await cached.get('k');
  console.log(`after SET elsewhere: ${third}; misses=${cache.stats().missCount}`);
  assert.strictEqual(third, 'v2');
  assert.strictEqual(cache.stats().missCount, 2);

  assert.strictEqual(await cached.get('k'), 'v2');  // cached again
  assert.strictEqual(cache.size(), 1);
  await other.flushAll();
  await waitFor(() => cache.size() === 0, 'the flush invalidation');
  const fourth = await cached.get('k');
  console.log(`after FLUSHALL: ${fourth}`);
  assert.strictEqual(fourth, null);

  await cached.quit();
  await other.quit();
  console.log('ok');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
