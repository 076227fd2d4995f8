// Client eviction (maxmemory-clients), as Redis 7.0: when the memory the normal and pub/sub
// clients hold together (query buffers, unsent replies, queued transactions, subscriptions,
// each client's own overhead: CLIENT LIST's tot-mem) reaches the limit, the largest evictable
// clients are closed until it is under again. The primary's link and replicas do not count;
// a CLIENT NO-EVICT client counts but is never chosen.
//
// Threading: each client reports its own figure from its own loop thread (Update); the total,
// the per-client figures and the buckets are guarded by this object's mutex, a leaf lock taken
// inside the keyspace lock or alone. Choosing and closing victims (EvictLocked) needs the
// keyspace lock, so that a victim is still registered and its socket open while it is killed;
// a victim is closed by its own loop (Client::Kill).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>

namespace kv::server {

class Client;
class Server;

// One client's place in the accounting (a member of Client).
struct ClientMemSlot {
  // Guarded by ClientEviction's mutex.
  size_t reported = 0;   // the figure in the total, when `counted`
  int bucket = -1;       // its bucket while evictable, else -1
  bool counted = false;  // a normal or pub/sub client: in the total
  size_t freeing = 0;    // evicted: its figure, until its close frees it
  // Chosen as a victim, or closing: out of the accounting for good. Written under the mutex;
  // the client's thread reads it to stop running what it had parsed.
  std::atomic<bool> evicted{false};
  // Subscriptions, watched keys, tracking prefixes and queued commands, as last measured with
  // the keyspace lock held (the loop thread reuses it between measurements).
  std::atomic<size_t> state_mem{0};
  // The client's loop thread: queued commands already summed (see MultiMemory).
  size_t multi_cmds = 0, multi_bytes = 0;
};

class ClientEviction {
 public:
  // Redis' buckets: clients under 32 KiB in the first, then one per power of two up to the
  // last, from 4 GiB up.
  static constexpr int kMinLog = 15, kMaxLog = 33, kBuckets = kMaxLog - kMinLog + 1;
  // A limit under this is raised to it, so that a mistaken setting cannot cut every client off.
  static constexpr size_t kMinLimit = 128 * 1024;

  explicit ClientEviction(Server& server) : server_(server) {}

  // maxmemory-clients as the config holds it ("0", bytes, or "N%") and maxmemory, at startup
  // and on CONFIG SET of either. Turning it on measures every client; a limit now passed
  // evicts at once, `current` (the client whose CONFIG SET it is, or null) after its reply.
  // Keyspace lock held.
  void Configure(const std::string& setting, uint64_t maxmemory, Client* current);
  // Accounting runs while maxmemory-clients is set (even a percentage of a maxmemory of 0,
  // which evicts nothing): DEBUG CLIENT-EVICTION shows the buckets then. Any thread.
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // A client's new figure. `counted`: a normal or pub/sub client; `evictable`: and not
  // NO-EVICT. True when the total has reached the limit and someone can be evicted. Any
  // thread, for its own clients.
  bool Update(Client& c, size_t mem, bool counted, bool evictable);
  // The client is closing. Keyspace lock held (before its socket is closed).
  void Remove(Client& c);
  // Evicts the largest evictable clients until the total is under the limit, logging each as
  // Redis does. `self` (the client whose thread this is, or null) is not killed at once when
  // `self_gets_replies`: it is closed once its replies are written. True when `self` went.
  // Keyspace lock held.
  bool EvictLocked(Client* self, bool self_gets_replies);
  // Has EvictLocked run on `c`'s loop soon (a figure passed the limit where the keyspace lock
  // cannot be taken). Any thread.
  void EvictSoon(Client& c);

  uint64_t evicted_clients() const { return evicted_.load(std::memory_order_relaxed); }
  // The memory of evicted clients whose loops have not closed them yet: Redis frees an evicted
  // client at once, so key eviction does not count it (Evictor::NotCounted). Any thread.
  size_t freeing() const { return freeing_.load(std::memory_order_relaxed); }
  void ResetStats() { evicted_.store(0, std::memory_order_relaxed); }
  // DEBUG CLIENT-EVICTION's text: each bucket's range, memory and client count.
  std::string DescribeBuckets() const;

 private:
  static int BucketOf(size_t mem);
  size_t LimitLocked() const;
  void DetachLocked(Client& c);
  Client* LargestLocked() const;

  Server& server_;
  std::atomic<bool> enabled_{false};
  std::atomic<bool> evict_posted_{false};
  std::atomic<uint64_t> evicted_{0};
  std::atomic<size_t> freeing_{0};
  mutable std::mutex mu_;
  // Guarded by mu_:
  int64_t setting_ = 0;  // bytes, or minus a percentage of maxmemory_
  uint64_t maxmemory_ = 0;
  size_t total_ = 0;      // the counted clients' figures
  size_t evictable_ = 0;  // clients in the buckets
  struct Bucket {
    size_t mem = 0;
    std::unordered_set<Client*> clients;
  };
  Bucket buckets_[kBuckets];
  int64_t over_logged_ms_ = 0;  // when "Over client maxmemory..." was last logged
};

// maxmemory-clients' canonical text: "0", a byte count, or "N%" (1 to 100; "0%" is "0").
// An error names what Redis' CONFIG SET says.
bool ParseMaxmemoryClients(const std::string& v, int64_t* out, std::string* error);

}  // namespace kv::server
