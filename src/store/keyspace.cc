#include "store/keyspace.h"

#include <algorithm>
#include <cmath>

#include "common/clock.h"
#include "common/hash.h"

namespace kv::store {

namespace {
constexpr size_t kExpireSamples = 20;          // ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP
constexpr int kExpireCyclePercent = 25;        // ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC
constexpr size_t kExpireAcceptableStale = 10;  // ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE (%)
constexpr int kLfuInit = 5;                    // LFU_INIT_VAL

}  // namespace

Keyspace::Keyspace(int num_dbs) : dbs_(num_dbs) { TickClock(WallMs()); }

void Keyspace::TickClock(int64_t now_ms) { clock_s_ = static_cast<uint32_t>(now_ms / 1000); }

uint32_t Keyspace::NowMinutes16() const { return (clock_s_ / 60) & 0xFFFF; }

Entry* Keyspace::Lookup(int dbi, std::string_view key, int64_t now_ms, Looker who) {
  Db& d = dbs_[dbi];
  Entry* e = d.Find(key);
  if (!e || loading_ || !d.IsExpired(e, now_ms)) return e;
  if (!expire_deletes_) {
    if (who == Looker::kPrimary) return e;
    if (who == Looker::kClient) return nullptr;
  }
  if (expire_paused_) return nullptr;
  RemoveExpired(dbi, key);
  return nullptr;
}

void Keyspace::RemoveExpired(int dbi, std::string_view key) {
  std::string k(key);  // the view may point into the entry that goes
  if (observer_) observer_->OnKeyExpired(dbi, k);
  expired_keys_++;
  int64_t start = MonoUs();
  Delete(dbi, k, lazy_settings_.expire);
  if (observer_) observer_->OnExpiredKeyRemoved(MonoUs() - start);
}

void Keyspace::TrackLocalExpire(int dbi, std::string_view key) {
  if (expire_deletes_ || dbi >= 64) return;
  Entry* e = dbs_[dbi].Find(key);
  if (e == nullptr || !e->has_expire()) return;
  auto it = local_expires_.find(key);
  if (it == local_expires_.end()) it = local_expires_.emplace(std::string(key), 0).first;
  it->second |= uint64_t{1} << dbi;
}

size_t Keyspace::ExpireLocalKeys(int64_t now_ms, size_t max_visits) {
  if (expire_deletes_ || expire_paused_ || local_expires_.empty()) return 0;
  size_t removed = 0;
  auto it = local_expires_.upper_bound(local_expires_cursor_);
  for (size_t n = 0; n < max_visits && !local_expires_.empty(); n++) {
    if (it == local_expires_.end()) it = local_expires_.begin();
    uint64_t dbs = it->second;
    for (int dbi = 0; dbi < num_dbs() && dbi < 64; dbi++) {
      if (!(dbs & (uint64_t{1} << dbi))) continue;
      Entry* e = dbs_[dbi].Find(it->first);
      if (e != nullptr && dbs_[dbi].IsExpired(e, now_ms)) {
        RemoveExpired(dbi, it->first);
        removed++;
        e = nullptr;
      }
      // Forgotten once gone or without a TTL; a key still to expire stays.
      if (e == nullptr || !e->has_expire()) dbs &= ~(uint64_t{1} << dbi);
    }
    local_expires_cursor_ = it->first;
    if (dbs == 0) {
      it = local_expires_.erase(it);
    } else {
      it->second = dbs;
      ++it;
    }
  }
  return removed;
}

Entry* Keyspace::Set(int dbi, std::string_view key, Value value, bool keep_ttl) {
  Db& d = dbs_[dbi];
  Entry* e = d.Find(key);
  if (e) {
    Overwrite(e, std::move(value));
    if (!keep_ttl) d.RemoveExpire(e);
    return e;
  }
  e = d.Add(key, std::move(value));
  InitAccess(e);
  return e;
}

void Keyspace::Overwrite(Entry* e, Value value) {
  if (!lazy_settings_.server_del || e->value.object() == nullptr) {
    e->value = std::move(value);
    return;
  }
  // The old value leaves in a keyless entry of its own; the freer judges its effort.
  Entry* old = Entry::Create("", std::move(e->value));
  e->value = std::move(value);
  lazy_freer().Free(old);
}

void Keyspace::FreeServerValue(Value value) {
  if (!lazy_settings_.server_del || value.object() == nullptr) return;  // freed on return
  lazy_freer().Free(Entry::Create("", std::move(value)));
}

void Keyspace::FreeDbsAsync(Keyspace& other) {
  std::vector<Db> old(other.dbs_.size());
  std::swap(old, other.dbs_);
  other.KeepSlotIndex();
  lazy_freer().FreeDbs(std::move(old));
}

bool Keyspace::Delete(int db, std::string_view key, bool lazy) {
  if (!lazy) return dbs_[db].Delete(key);
  Entry* e = dbs_[db].Unlink(key);
  if (e == nullptr) return false;
  lazy_freer().Free(e);
  return true;
}

LazyFreer& Keyspace::lazy_freer() {
  if (!lazy_) lazy_ = std::make_unique<LazyFreer>();
  return *lazy_;
}

void Keyspace::FlushAll(bool async) {
  local_expires_.clear();
  if (!async) {
    for (auto& d : dbs_) d.Clear();
    return;
  }
  std::vector<Db> old(dbs_.size());
  std::swap(old, dbs_);
  for (auto& d : dbs_) d.table().set_resize_allowed(resize_allowed_);
  KeepSlotIndex();
  lazy_freer().FreeDbs(std::move(old));
}

void Keyspace::FlushDb(int db, bool async) {
  if (!async) {
    dbs_[db].Clear();
    return;
  }
  std::vector<Db> old(1);
  std::swap(old[0], dbs_[db]);
  dbs_[db].table().set_resize_allowed(resize_allowed_);
  KeepSlotIndex();
  lazy_freer().FreeDbs(std::move(old));
}

void Keyspace::EnableSlotIndex() {
  slot_index_ = true;
  KeepSlotIndex();
}

void Keyspace::KeepSlotIndex() {
  for (size_t i = 0; i < dbs_.size(); i++) {
    bool want = slot_index_ && i == 0;
    if (want && !dbs_[i].slot_indexed()) dbs_[i].EnableSlotIndex();
    if (!want && dbs_[i].slot_indexed()) dbs_[i].DisableSlotIndex();
  }
}

size_t Keyspace::TotalKeys() const {
  size_t n = 0;
  for (const auto& d : dbs_) n += d.size();
  return n;
}

size_t Keyspace::ExpireSamplesPerLoop(int effort) {
  return kExpireSamples + kExpireSamples / 4 * static_cast<size_t>(std::clamp(effort, 1, 10) - 1);
}

int Keyspace::ExpireCyclePercent(int effort) {
  return kExpireCyclePercent + 2 * (std::clamp(effort, 1, 10) - 1);
}

ExpireCycleStats Keyspace::ActiveExpireCycle(int64_t budget_us, int64_t now_ms, int effort) {
  ExpireCycleStats st;
  if (!expire_deletes_ || expire_paused_) return st;
  const size_t per_loop = ExpireSamplesPerLoop(effort);
  const size_t acceptable_stale = kExpireAcceptableStale - (std::clamp(effort, 1, 10) - 1);
  int64_t start = MonoUs();
  for (size_t n = 0; n < dbs_.size(); n++) {
    int dbi = static_cast<int>(expire_db_cursor_++ % dbs_.size());
    Db& d = dbs_[dbi];
    auto on_expire = [&](std::string_view key) {
      if (observer_) observer_->OnKeyExpired(dbi, key);
    };
    auto on_removed = [&](int64_t us) {
      if (observer_) observer_->OnExpiredKeyRemoved(us);
    };
    LazyFreer* freer = lazy_settings_.expire ? &lazy_freer() : nullptr;
    while (d.expires_size() > 0) {
      size_t sample = std::min(per_loop, d.expires_size());
      size_t removed = d.ExpireSample(sample, now_ms, on_expire, freer, on_removed);
      st.sampled += sample;
      st.expired += removed;
      expired_keys_ += removed;
      st.elapsed_us = MonoUs() - start;
      if (st.elapsed_us > budget_us) {
        st.timed_out = true;
        return st;
      }
      if (removed * 100 / sample <= acceptable_stale) break;  // few enough stale: move on
    }
  }
  st.elapsed_us = MonoUs() - start;
  return st;
}

void Keyspace::Cron(int64_t budget_us) {
  for (auto& d : dbs_) d.table().Cron(budget_us / static_cast<int64_t>(dbs_.size()) + 1);
}

void Keyspace::SetResizeAllowed(bool allowed) {
  resize_allowed_ = allowed;
  for (auto& d : dbs_) d.table().set_resize_allowed(allowed);
}

void Keyspace::set_lfu(bool on, int log_factor, int decay_minutes) {
  lfu_ = on;
  lfu_log_factor_ = log_factor;
  lfu_decay_minutes_ = decay_minutes;
}

void Keyspace::InitAccess(Entry* e) {
  e->access = lfu_ ? (NowMinutes16() << 8) | kLfuInit : clock_s_;
}

int Keyspace::LfuFrequency(const Entry* e) const {
  uint32_t counter = e->access & 0xFF;
  uint32_t last = (e->access >> 8) & 0xFFFF;
  uint32_t now = NowMinutes16();
  uint32_t elapsed = now >= last ? now - last : 65535 - last + now;
  uint32_t periods = lfu_decay_minutes_ ? elapsed / lfu_decay_minutes_ : 0;
  return periods > counter ? 0 : static_cast<int>(counter - periods);
}

void Keyspace::Touch(Entry* e) {
  if (!lfu_) {
    e->access = clock_s_;
    return;
  }
  // Redis' LFULogIncr: the counter grows logarithmically with accesses.
  uint32_t counter = static_cast<uint32_t>(LfuFrequency(e));
  if (counter < 255) {
    double r = static_cast<double>(RandomU64() >> 11) / 9007199254740992.0;
    double base = counter > kLfuInit ? counter - kLfuInit : 0;
    double p = 1.0 / (base * lfu_log_factor_ + 1);
    if (r < p) counter++;
  }
  e->access = (NowMinutes16() << 8) | counter;
}

void Keyspace::SetIdleSeconds(Entry* e, int64_t idle_s) {
  if (lfu_) return;
  e->access = idle_s >= clock_s_ ? 0 : clock_s_ - static_cast<uint32_t>(idle_s);
}

void Keyspace::SetLfuFrequency(Entry* e, int freq) {
  if (!lfu_) return;
  e->access = (NowMinutes16() << 8) | static_cast<uint32_t>(freq & 0xFF);
}

int64_t Keyspace::IdleSeconds(const Entry* e) const {
  return clock_s_ > e->access ? clock_s_ - e->access : 0;
}

}  // namespace kv::store
