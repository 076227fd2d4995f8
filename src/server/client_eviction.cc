#include "server/client_eviction.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "server/client.h"
#include "server/poll_group.h"
#include "server/server.h"

namespace kv::server {

namespace {
// What one subscription, watched key or tracking prefix costs a client beyond its text: a
// node of an ordered set or vector entry and the string's header.
constexpr size_t kEntryOverhead = 64;
// An input buffer bigger than this is given back once it is empty while maxmemory-clients is
// set (a big argument's room would otherwise count against the client for the rest of its
// life); one bigger than kIdleInputMax always is. Below that, reusing it saves an allocation
// per big request.
constexpr size_t kIdleInputKeep = 64 * 1024;
constexpr size_t kIdleInputMax = 1024 * 1024;
}  // namespace

bool ParseMaxmemoryClients(const std::string& v, int64_t* out, std::string* error) {
  if (v.size() > 1 && v.back() == '%') {
    auto pct = ParseInt64(std::string_view(v).substr(0, v.size() - 1));
    if (pct && *pct >= 0) {
      if (*pct > 100) {
        *error = "percentage argument must be less or equal to 100";
        return false;
      }
      *out = -*pct;
      return true;
    }
  }
  auto bytes = ParseMemory(v);
  if (!bytes || *bytes < 0 || (!v.empty() && v[0] == '-')) {
    *error = "argument must be a memory or percent value";
    return false;
  }
  *out = *bytes;
  return true;
}

int ClientEviction::BucketOf(size_t mem) {
  int bits = static_cast<int>(std::bit_width(mem));
  return std::clamp(bits, kMinLog, kMaxLog) - kMinLog;
}

// Redis' getClientEvictionLimit: 0 when nothing is to be evicted.
size_t ClientEviction::LimitLocked() const {
  size_t limit = 0;
  if (setting_ > 0) {
    limit = static_cast<size_t>(setting_);
  } else if (setting_ < 0 && maxmemory_ > 0) {
    limit = static_cast<size_t>(static_cast<double>(maxmemory_) * (-static_cast<double>(setting_)) /
                                100);
  } else {
    return 0;
  }
  return std::max(limit, kMinLimit);
}

void ClientEviction::Configure(const std::string& setting, uint64_t maxmemory, Client* current) {
  int64_t value = 0;
  std::string error;
  if (!ParseMaxmemoryClients(setting, &value, &error)) value = 0;  // the config checked it
  {
    std::lock_guard lock(mu_);
    bool was_on = setting_ != 0;
    setting_ = value;
    maxmemory_ = maxmemory;
    enabled_.store(value != 0, std::memory_order_relaxed);
    if (value == 0 && was_on) {
      // Off: the accounting is dropped whole; nothing is measured until it is on again.
      for (auto& [id, c] : server_.clients()) {
        c->mem_slot().reported = 0;
        c->mem_slot().bucket = -1;
        c->mem_slot().counted = false;
      }
      for (Bucket& b : buckets_) b = Bucket{};
      total_ = evictable_ = 0;
    }
  }
  if (value == 0) return;
  // Every client measured now: the limit applies to the clients as they are.
  for (auto& [id, c] : server_.clients()) {
    // The running client's replies so far are in its buffer, not yet in its published figures.
    size_t mem = c == current ? c->OwnMemory() + c->MultiMemory() : c->MemoryUsage();
    Update(*c, mem, c->EvictionCounted(), c->EvictionAllowed());
  }
  EvictLocked(current, /*self_gets_replies=*/true);
}

bool ClientEviction::Update(Client& c, size_t mem, bool counted, bool evictable) {
  std::lock_guard lock(mu_);
  ClientMemSlot& s = c.mem_slot();
  if (setting_ == 0 || s.evicted) return false;
  if (s.counted) total_ -= s.reported;
  int bucket = evictable && counted ? BucketOf(mem) : -1;
  if (s.bucket >= 0) {
    buckets_[s.bucket].mem -= s.reported;
    if (bucket != s.bucket) {
      buckets_[s.bucket].clients.erase(&c);
      evictable_--;
    }
  }
  if (bucket >= 0) {
    buckets_[bucket].mem += mem;
    if (bucket != s.bucket) {
      buckets_[bucket].clients.insert(&c);
      evictable_++;
    }
  }
  s.bucket = bucket;
  s.reported = mem;
  s.counted = counted;
  if (counted) total_ += mem;
  size_t limit = LimitLocked();
  return limit > 0 && total_ >= limit && evictable_ > 0;
}

void ClientEviction::DetachLocked(Client& c) {
  ClientMemSlot& s = c.mem_slot();
  if (s.counted) total_ -= s.reported;
  if (s.bucket >= 0) {
    buckets_[s.bucket].mem -= s.reported;
    buckets_[s.bucket].clients.erase(&c);
    evictable_--;
  }
  s.bucket = -1;
  s.counted = false;
  s.reported = 0;
}

void ClientEviction::Remove(Client& c) {
  std::lock_guard lock(mu_);
  DetachLocked(c);
  freeing_.fetch_sub(c.mem_slot().freeing, std::memory_order_relaxed);
  c.mem_slot().freeing = 0;
  c.mem_slot().evicted = true;  // a closing client reports nothing more
}

// The biggest client of the highest bucket that has any (Redis takes any client of that
// bucket; the biggest is the one whose eviction frees the most).
Client* ClientEviction::LargestLocked() const {
  for (int b = kBuckets - 1; b >= 0; b--) {
    Client* best = nullptr;
    for (Client* c : buckets_[b].clients) {
      if (!best || c->mem_slot().reported > best->mem_slot().reported ||
          (c->mem_slot().reported == best->mem_slot().reported && c->id() < best->id())) {
        best = c;
      }
    }
    if (best) return best;
  }
  return nullptr;
}

bool ClientEviction::EvictLocked(Client* self, bool self_gets_replies) {
  std::vector<Client*> victims;
  bool over_after = false;
  {
    std::lock_guard lock(mu_);
    size_t limit = LimitLocked();
    if (limit == 0) return false;
    while (total_ >= limit) {
      Client* c = LargestLocked();
      if (!c) {
        over_after = true;
        break;
      }
      c->mem_slot().freeing = c->mem_slot().reported;
      freeing_.fetch_add(c->mem_slot().freeing, std::memory_order_relaxed);
      DetachLocked(*c);
      c->mem_slot().evicted = true;
      victims.push_back(c);
    }
    // Redis logs this on every pass while it holds; once a second says as much.
    int64_t now = MonoMs();
    if (over_after && now - over_logged_ms_ < 1000) over_after = false;
    if (over_after) over_logged_ms_ = now;
  }
  bool self_gone = false;
  int64_t now = MonoMs();
  for (Client* c : victims) {
    LOG_NOTICE("Evicting client: %s", c->Describe(now).c_str());
    evicted_.fetch_add(1, std::memory_order_relaxed);
    if (c == self) {
      self_gone = true;
      c->session().close_after_reply = true;  // runs nothing more of its input
      if (self_gets_replies) {
        // As Redis writes the round's replies before it evicts: the reply this command is
        // producing goes out with the round's writes (what the socket takes), then the close.
        PollGroup* g = &c->group();
        uint64_t id = c->id();
        g->loop().Post([g, id] {
          if (Client* me = g->Find(id)) me->Kill();
        });
        continue;
      }
    }
    c->Kill();
  }
  if (over_after) LOG_WARNING("Over client maxmemory after evicting all evictable clients");
  return self_gone;
}

void ClientEviction::EvictSoon(Client& c) {
  if (evict_posted_.exchange(true, std::memory_order_acq_rel)) return;
  Server* server = &server_;
  c.group().loop().Post([this, server] {
    evict_posted_.store(false, std::memory_order_release);
    // A busy script holds the keyspace lock: the next figure past the limit tries again.
    std::unique_lock lock(server->mu(), std::defer_lock);
    if (!server->LockUnlessBusy(lock)) return;
    EvictLocked(nullptr, false);
  });
}

std::string ClientEviction::DescribeBuckets() const {
  std::lock_guard lock(mu_);
  std::string out;
  char line[128];
  for (int j = 0; j < kBuckets; j++) {
    int n;
    if (j == 0) {
      n = snprintf(line, sizeof line, "bucket          0");
    } else {
      n = snprintf(line, sizeof line, "bucket %10zu", size_t{1} << (j - 1 + kMinLog));
    }
    out.append(line, static_cast<size_t>(n));
    if (j == kBuckets - 1) {
      n = snprintf(line, sizeof line, "+            : ");
    } else {
      n = snprintf(line, sizeof line, " - %10zu: ", (size_t{1} << (j + kMinLog)) - 1);
    }
    out.append(line, static_cast<size_t>(n));
    n = snprintf(line, sizeof line, "tot-mem: %10zu, clients: %zu\n", buckets_[j].mem,
                 buckets_[j].clients.size());
    out.append(line, static_cast<size_t>(n));
  }
  return out;
}

void Server::ApplyClientEviction() {
  client_eviction_->Configure(config_->GetString("maxmemory-clients"),
                              static_cast<uint64_t>(config_->GetInt("maxmemory")), current_client_);
}

// --- The client's side: what it holds, measured where its fields may be read. ---

// A client on its way out (killed, or past its hard output limit, which closes it first, as
// that limit takes precedence in Redis) neither counts nor is chosen.
bool Client::EvictionCounted() const {
  if (flags_ & (kMaster | kReplica)) return false;
  if (close_requested_.load(std::memory_order_relaxed)) return false;
  size_t hard = server_.normal_limits().hard;
  return !(hard && subscriptions() == 0 && out_pending_.load(std::memory_order_relaxed) > hard);
}

bool Client::EvictionAllowed() const { return EvictionCounted() && !session_.no_evict; }

// Subscriptions, watched keys and tracking prefixes (their entries; a watched key's or a
// prefix's text is its own, so it counts too). Keyspace lock held, or the client's own thread.
size_t Client::StateMemory() const {
  size_t mem = (subscriptions() + tracking_.prefixes.size()) * kEntryOverhead;
  mem += tx_.watched.capacity() * sizeof(WatchedKey);
  return mem;
}

// The queued commands of a transaction. Keyspace lock held (any thread): summed whole.
size_t Client::MultiMemory() const {
  size_t mem = 0;
  for (const auto& argv : tx_.queued) {
    mem += sizeof(argv);
    for (const auto& a : argv) mem += sizeof(a) + a.size();
  }
  return mem;
}

size_t Client::MemoryUsage() const {
  // The output's buffer, pending replies and the reply buffer's room alike (Redis counts its
  // reply list and its reply buffer's size).
  return in_cap_.load(std::memory_order_relaxed) + out_cap_.load(std::memory_order_relaxed) +
         sizeof(Client) + StateMemory() + MultiMemory();
}

// The own thread's figure: its buffers as they are now, and the rest as last measured.
size_t Client::OwnMemory() const {
  return in_.capacity() + out_.capacity() + sizeof(Client) +
         mem_slot_.state_mem.load(std::memory_order_relaxed);
}

// A big argument's room is given back once it is used, as Redis frees a big argument's query
// buffer.
void Client::ReleaseIdleInput() {
  size_t keep = server_.client_eviction().enabled() ? kIdleInputKeep : kIdleInputMax;
  if (in_.empty() && in_.capacity() > keep) {
    in_.ShrinkIfIdle(keep);
    in_cap_.store(in_.capacity(), std::memory_order_relaxed);
  }
}

void Client::NoteMemory() {
  if (closed_) return;
  ReleaseIdleInput();
  ClientEviction& ev = server_.client_eviction();
  if (!ev.enabled()) return;
  if (!ev.Update(*this, OwnMemory(), EvictionCounted(), EvictionAllowed())) return;
  // Past the limit: evicted now where the lock is free (as Redis evicts before it serves the
  // next event), else from the loop once it is.
  std::unique_lock lock(server_.mu(), std::try_to_lock);
  if (lock.owns_lock()) {
    ev.EvictLocked(nullptr, false);
  } else {
    ev.EvictSoon(*this);
  }
}

bool Client::CheckMemoryAfterCommand() {
  ReleaseIdleInput();
  // Past its hard output limit it is closed by that limit, not evicted (EvictionCounted).
  out_pending_.store(out_.size() - out_sent_, std::memory_order_relaxed);
  return CheckMemoryLocked();
}

bool Client::CheckMemoryLocked() {
  ClientEviction& ev = server_.client_eviction();
  if (!ev.enabled()) return false;
  // Evicted by another client's check: what it sent after is not run, as Redis frees it.
  if (mem_slot_.evicted.load(std::memory_order_relaxed)) return true;
  // Queued commands only grow between EXEC/DISCARDs: what was summed is kept, not redone.
  ClientMemSlot& s = mem_slot_;
  if (!tx_.active || tx_.queued.size() < s.multi_cmds) s.multi_cmds = s.multi_bytes = 0;
  for (; s.multi_cmds < tx_.queued.size(); s.multi_cmds++) {
    const auto& argv = tx_.queued[s.multi_cmds];
    s.multi_bytes += sizeof(argv);
    for (const auto& a : argv) s.multi_bytes += sizeof(a) + a.size();
  }
  s.state_mem.store(StateMemory() + s.multi_bytes, std::memory_order_relaxed);
  if (!ev.Update(*this, OwnMemory(), EvictionCounted(), EvictionAllowed())) return false;
  return ev.EvictLocked(this, /*self_gets_replies=*/false);
}

}  // namespace kv::server
