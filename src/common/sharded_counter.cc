#include "common/sharded_counter.h"

namespace kv {
namespace {
thread_local unsigned tls_counter_shard = 0;
}  // namespace

void SetCounterShard(unsigned shard) { tls_counter_shard = shard; }
unsigned CounterShard() { return tls_counter_shard; }

}  // namespace kv
