"""redis-py against kvstore: lock() (its extend, reacquire and release are EVALSHA scripts),
register_script (EVALSHA, then EVAL's body again after SCRIPT FLUSH), and functions (function_load,
fcall, fcall_ro, function_list, function_dump and function_restore). Prints "ok" on success.
usage: redis_py_scripts.py PORT"""
import sys

import redis

r = redis.Redis(port=int(sys.argv[1]))
r.flushall()

lock = r.lock("resource", timeout=5, blocking_timeout=1)
assert lock.acquire(), "acquire"
assert r.get("resource") == lock.local.token, "the lock holds its token"
other = r.lock("resource", timeout=5, blocking_timeout=0.2)
assert not other.acquire(), "a second holder waits and gives up"
assert lock.extend(10), "extend"
assert 5000 < r.pttl("resource") <= 15000, r.pttl("resource")
assert lock.reacquire(), "reacquire"
assert lock.owned(), "owned"
lock.release()
assert r.get("resource") is None, "released"
try:
    lock.release()
    raise AssertionError("releasing an unlocked lock must fail")
except redis.exceptions.LockError:
    pass
try:
    other.extend(1)
    raise AssertionError("extending a lock not held must fail")
except redis.exceptions.LockError:
    pass
with r.lock("with-block", timeout=2):
    assert r.exists("with-block") == 1
assert r.exists("with-block") == 0

incr = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
assert incr(keys=["counter"], args=[5]) == 5
r.script_flush()
assert incr(keys=["counter"], args=[5]) == 10, "NOSCRIPT is answered with the body again"
pipe = r.pipeline()
incr(keys=["counter"], args=[1], client=pipe)
incr(keys=["counter"], args=[1], client=pipe)
assert pipe.execute() == [11, 12]

r.function_flush()
lib = """#!lua name=ratelimit
redis.register_function('hit', function(keys, args)
  local n = redis.call('incr', keys[1])
  if n == 1 then redis.call('pexpire', keys[1], args[1]) end
  return n
end)
redis.register_function{function_name='hits', callback=function(keys)
  return tonumber(redis.call('get', keys[1]) or 0) end, flags={'no-writes'}}"""
assert r.function_load(lib) == b"ratelimit"
assert [r.fcall("hit", 1, "rl:user", 60000) for _ in range(3)] == [1, 2, 3]
assert r.fcall_ro("hits", 1, "rl:user") == 3
assert 0 < r.pttl("rl:user") <= 60000
listed = r.function_list()
assert len(listed) == 1 and listed[0][1] == b"ratelimit", listed
dump = r.function_dump()
r.function_flush()
assert r.function_restore(dump)
assert r.fcall("hit", 1, "rl:user", 60000) == 4
print("ok")
