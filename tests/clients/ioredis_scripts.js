// ioredis against kvstore: defineCommand (EVALSHA, falling back to EVAL on NOSCRIPT), in
// pipelines and transactions, with errors from the script. Prints "ok" on success.
// usage: node ioredis_scripts.js PORT
const assert = require('assert');
const Redis = require('ioredis');

async function main() {
  const r = new Redis({port: Number(process.argv[2]), maxRetriesPerRequest: 1});
  await r.flushall();
  r.defineCommand('incrAndGet', {
    numberOfKeys: 1,
    lua: 'redis.call(\'incrby\', KEYS[1], ARGV[1]) return redis.call(\'get\', KEYS[1])',
  });
  r.defineCommand('fail', {numberOfKeys: 0, lua: 'return redis.error_reply(\'MYERR no way\')'});
  r.defineCommand('pair', {numberOfKeys: 2, lua: 'return {KEYS[1], KEYS[2], ARGV[1]}'});
  assert.strictEqual(await r.incrAndGet('k', 3), '3');
  await r.script('FLUSH');
  assert.strictEqual(await r.incrAndGet('k', 3), '6');
  const piped = await r.pipeline().incrAndGet('k', 2).incrAndGet('k', 1).exec();
  assert.deepStrictEqual(piped, [[null, '8'], [null, '9']]);
  const tx = await r.multi().incrAndGet('k', 1).get('k').exec();
  assert.deepStrictEqual(tx, [[null, '10'], [null, '10']]);
  assert.deepStrictEqual(await r.pair('a', 'b', 'c'), ['a', 'b', 'c']);
  await assert.rejects(r.fail(), /MYERR no way/);
  r.disconnect();
  console.log('ok');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
