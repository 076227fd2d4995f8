// Whole-slot migration, the source's side: an export job's thread (see slot_migration.h).
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "common/key_slot.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "net/socket.h"
#include "net/tls.h"
#include "persist/dump.h"
#include "repl/datalink/data_link.h"
#include "repl/datalink/link_io.h"
#include "repl/feed.h"
#include "repl/primary/primary.h"
#include "server/server.h"
#include "server/slot_migration.h"

namespace kv::server {

namespace {

constexpr int kControlTimeoutMs = 10000;
// Stream bytes queued for the link and not written yet, at most: the snapshot waits beyond it.
constexpr uint64_t kMaxUnsent = 4ull << 20;
// How long the source waits, writes paused, for the target's claim.
constexpr int64_t kHandOverTimeoutMs = 10000;
constexpr int64_t kProgressLogMs = 2000;
// The snapshot takes slots together under one hold of the keyspace lock up to this much.
constexpr size_t kBatchBytes = 64u << 10;
constexpr int kBatchSlots = 64;
// How often the source asks the target how its import goes while it sends (a target that died
// or gave up is found by its control connection, not by a stalled link).
constexpr int64_t kStatusEveryMs = 250;

void SleepUs(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

// The data link's provider for this node's settings: repl-transport tcp moves the migration
// over the socket channel (same code, no libfabric), `auto` with no provider named tries verbs.
std::string ProviderFor(const std::string& transport, const std::string& provider) {
  if (transport == "tcp") return "sockets";
  if (provider == "auto") return "verbs";
  return provider;
}

}  // namespace

void SlotMigrations::InstallTap(Job* j, repl::DataLinkSender* link) {
  tap_slots_.assign(kClusterSlots, false);
  tap_sent_.assign(kClusterSlots, false);
  tap_flushed_ = false;
  for (const auto& r : j->ranges) {
    for (int s = r.first; s <= r.last; s++) tap_slots_[s] = true;
  }
  server_.primary().feed().SetTap(
      [this](int, std::span<const std::string_view> argv) {
        std::string_view key = server_.FirstKey(argv);
        if (key.empty()) {
          // A flush empties the slots here and not on the target: the export fails.
          if (EqualsIgnoreCase(argv[0], "flushall") || EqualsIgnoreCase(argv[0], "flushdb")) {
            tap_flushed_ = true;
          }
          return false;
        }
        int slot = KeyHashSlot(key);
        return tap_slots_[slot] && tap_sent_[slot];
      },
      [link](std::string_view bytes) { link->Enqueue(bytes); });
}

void SlotMigrations::RemoveTap() {
  server_.primary().feed().ClearTap();
  tap_slots_.clear();
  tap_sent_.clear();
}

namespace {

// `restore` (RESTORE or RESTORE-ASKING) of key `e` with its absolute TTL, as RESP.
void AppendRestore(std::string_view restore, const store::Db& db, const store::Entry* e,
                   const store::EncodingLimits& limits, std::string* out) {
  int64_t at = db.GetExpire(e);
  std::string payload = persist::DumpValue(e->value, limits, /*compression=*/false);
  std::string ttl = at < 0 ? "0" : std::to_string(at);
  std::string_view argv[] = {restore, e->key(), ttl, payload, "REPLACE", "ABSTTL"};
  repl::Feed::EncodeCommand(argv, out);
}

}  // namespace

uint64_t SlotMigrations::DumpSlot(int slot, std::string* out) {
  store::Db& db = server_.keyspace().db(0);
  int64_t now_ms = WallMs();
  uint64_t n = 0;
  for (store::Entry* e : db.SlotKeys(slot)) {
    if (db.IsExpired(e, now_ms)) continue;  // its DEL is on its way
    AppendRestore("RESTORE", db, e, server_.keyspace().limits(), out);
    n++;
  }
  return n;
}

void SlotMigrations::RunExport(Job* j) {
  std::string error = Export(j);
  std::lock_guard lock(server_.mu());
  if (error.empty()) {
    SetState(*j, "success");  // the message about the deletion goes
    j->deleting = false;
  } else {
    SetState(*j, j->cancel ? "cancelled" : "failed", error);
  }
  exporting_ = nullptr;
  StartNextExport();
  TrimLog();
}

// The export, start to end; "" once the target serves the slots, else why it failed (the
// source serves them still, with every key).
std::string SlotMigrations::Export(Job* j) {
  std::string ip, myid, provider, poll_mode, user, pass;
  int port = 0;
  bool doorbell = true;
  int64_t key_delay_us = 0;
  std::shared_ptr<net::TlsContext> tls_ctx;
  {
    std::lock_guard lock(server_.mu());
    if (j->cancel) return "cancelled";
    cluster::Cluster* cl = server_.cluster();
    if (Status st = cl->CheckExport(j->ranges, j->target, &ip, &port); !st.ok()) {
      return st.message();
    }
    myid = cl->myid();
    Config& cfg = server_.config();
    provider = ProviderFor(cfg.GetString("repl-transport"), cfg.GetString("repl-rdma-provider"));
    poll_mode = cfg.GetString("repl-rdma-poll-mode");
    doorbell = cfg.GetBool("repl-rdma-doorbell");
    user = cfg.GetString("masteruser");
    pass = cfg.GetString("masterauth");
    // As a snapshot child sleeps per key saved (tests use it to slow a migration down).
    key_delay_us = std::max<int64_t>(0, cfg.GetInt("rdb-key-save-delay"));
    // With tls-cluster the target's announced port is its TLS one, as for MIGRATE.
    if (cfg.GetBool("tls-cluster")) {
      tls_ctx = server_.tls_context();
      if (!tls_ctx) return "tls-cluster is on but TLS is not configured";
    }
    SetState(*j, "connecting");
  }

  // The control connection, authenticated as a replica would be (masteruser, masterauth).
  auto fd = net::ConnectTcp(ip, port, kControlTimeoutMs);
  if (!fd.ok()) return "connecting to the target: " + fd.status().message();
  std::unique_ptr<net::TlsConn> tls;
  if (tls_ctx) {
    auto conn = net::TlsConn::ConnectUntil(tls_ctx, fd->get(), MonoMs() + kControlTimeoutMs);
    if (!conn.ok()) return "connecting to the target: " + conn.status().message();
    tls = std::move(*conn);
  }
  repl::LinkIo io(fd->get(), kControlTimeoutMs, tls.get());
  auto call = [&](std::initializer_list<std::string_view> argv) -> Result<std::string> {
    KV_TRY(io.WriteAll(repl::ReplCommand(argv)));
    return io.ReadLine();
  };
  if (!pass.empty()) {
    auto r = user.empty() ? call({"AUTH", pass}) : call({"AUTH", user, pass});
    if (!r.ok()) return "control connection: " + r.status().message();
    if (*r != "+OK") return "the target refused AUTH: " + *r;
  }

  // The data link: this end's setup goes with ESTABLISH, the target's comes back.
  std::string blob;
  auto created =
      repl::DataLinkSender::Create(repl::DataLinkOptions(provider, poll_mode, doorbell), &blob);
  if (!created.ok() && provider == "verbs") {  // `auto` and no RDMA device here
    provider = "sockets";
    created =
        repl::DataLinkSender::Create(repl::DataLinkOptions(provider, poll_mode, doorbell), &blob);
  }
  if (!created.ok()) return "data link: " + created.status().message();
  std::unique_ptr<repl::DataLinkSender> link = std::move(*created);
  std::string ranges;
  for (const auto& r : j->ranges) {
    if (!ranges.empty()) ranges += ',';
    ranges += std::to_string(r.first) + "-" + std::to_string(r.last);
  }
  auto reply =
      call({"CLUSTER", "SYNCSLOTS", "ESTABLISH", j->name, myid, ranges, provider, HexEncode(blob)});
  if (!reply.ok()) return "control connection: " + reply.status().message();
  std::string peer;
  if (reply->rfind("-ERR unknown subcommand", 0) == 0) {  // not kvstore
    link.reset();
    return ExportByMigrate(j, io, myid);
  }
  if (reply->rfind("+RDMA ", 0) != 0 || !HexDecode(std::string_view(*reply).substr(6), &peer)) {
    return "the target refused the migration: " + reply->substr(0, 200);
  }
  link->Start(std::move(peer));

  bool tapped = false, paused = false;
  // Whatever ends the export early: the tap and the pause go, the target drops what it got.
  // Called without the lock.
  auto fail = [&](std::string why) {
    {
      std::lock_guard lock(server_.mu());
      export_link_ = nullptr;
      if (tapped) RemoveTap();
      if (paused) {
        server_.UnpauseFor(Server::PausePurpose::kSlotMigration);
        // A claim that comes after all deletes the keys as any lost slot's.
        server_.cluster()->MarkExporting(j->ranges, false);
      }
    }
    link->Break();
    (void)call({"CLUSTER", "SYNCSLOTS", "ABORT", j->name});
    return why;
  };
  {
    std::lock_guard lock(server_.mu());
    j->link = link->Describe();
    export_link_ = link.get();
    InstallTap(j, link.get());
    tapped = true;
    SetState(*j, "snapshot");
  }
  LOG_NOTICE("Slot migration %.8s: sending %d slots to %s:%d over the data link (%s)",
             j->name.c_str(), j->slots_total, ip.c_str(), port, provider.c_str());

  // Why the export stops here ("" when it goes on), asked with the lock held.
  auto stopped = [&]() -> std::string {
    if (j->cancel) return "cancelled";
    if (tap_flushed_) return "the dataset was flushed during the migration";
    return "";
  };
  // The target's word on its import: "" while it goes on, else why it stopped.
  int64_t last_status = MonoMs();
  auto target_trouble = [&]() -> std::string {
    if (MonoMs() - last_status < kStatusEveryMs) return "";
    last_status = MonoMs();
    auto st = call({"CLUSTER", "SYNCSLOTS", "STATUS", j->name});
    if (!st.ok()) return "control connection: " + st.status().message();
    if (st->empty() || (*st)[0] != '+') return "the target: " + st->substr(1, 200);
    return "";
  };
  // 1. The snapshot, slot by slot; from the moment a slot is sent, its writes follow through
  // the tap. Slots are taken together under one lock hold up to kBatchBytes (or kBatchSlots).
  std::vector<int> slots;
  for (const auto& r : j->ranges) {
    for (int s = r.first; s <= r.last; s++) slots.push_back(s);
  }
  std::string batch;
  int64_t last_log = MonoMs();
  for (size_t next = 0; next < slots.size();) {
    batch.clear();
    uint64_t dumped = 0;
    std::string why;
    {
      std::lock_guard lock(server_.mu());
      why = stopped();
      for (int n = 0;
           why.empty() && next < slots.size() && n < kBatchSlots && batch.size() < kBatchBytes;
           n++) {
        int s = slots[next++];
        dumped += DumpSlot(s, &batch);
        j->slots_sent++;
        tap_sent_[s] = true;
      }
      j->keys += dumped;
      j->bytes += batch.size();
      // Enqueued under the lock: the slots' writes from now on come after their keys.
      if (!batch.empty()) link->Enqueue(batch);
    }
    if (!why.empty()) return fail(why);
    link->Kick();
    if (key_delay_us > 0 && dumped > 0) SleepUs(static_cast<int>(key_delay_us * dumped));
    while (link->Unsent() > kMaxUnsent && !link->failed() && !j->cancel) SleepUs(200);
    if (link->failed()) return fail("data link: " + link->error());
    if (std::string trouble = target_trouble(); !trouble.empty()) return fail(trouble);
    if (MonoMs() - last_log >= kProgressLogMs) {
      last_log = MonoMs();
      std::lock_guard lock(server_.mu());
      LOG_NOTICE("Slot migration %.8s: %d/%d slots, %llu keys, %s sent", j->name.c_str(),
                 j->slots_sent, j->slots_total, static_cast<unsigned long long>(j->keys),
                 repl::HumanMB(static_cast<int64_t>(j->bytes)).c_str());
    }
  }
  {
    std::lock_guard lock(server_.mu());
    SetState(*j, "streaming");
  }
  // 2. The stream catches up: little is left to send once writes stop.
  while ((link->Unsent() > 0 || hold_ == kHoldStreaming) && !link->failed() && !j->cancel) {
    if (std::string why = target_trouble(); !why.empty()) return fail(why);
    SleepUs(200);
  }
  if (link->failed()) return fail("data link: " + link->error());

  // 3. The hand-over: writes paused, the end mark after the last write, then the target's claim.
  int64_t pause_start_us = 0;
  std::string why;
  do {
    std::lock_guard lock(server_.mu());
    why = stopped();
    if (!why.empty()) break;
    server_.PauseWritesFor(Server::PausePurpose::kSlotMigration);
    paused = true;
    server_.cluster()->MarkExporting(j->ranges, true);
    pause_start_us = MonoUs();
    SetState(*j, "handover");
  } while (false);
  if (!why.empty()) return fail(why);
  while (hold_ == kHoldHandover && !j->cancel) {
    if (std::string trouble = target_trouble(); !trouble.empty()) return fail(trouble);
    SleepUs(1000);
  }
  {
    std::lock_guard lock(server_.mu());
    std::string_view end[] = {"CLUSTER", "SYNCSLOTS", "END"};
    std::string mark;
    repl::Feed::EncodeCommand(end, &mark);
    link->Enqueue(mark);
    RemoveTap();
    tapped = false;
  }
  link->Kick();
  int64_t deadline = MonoMs() + kHandOverTimeoutMs;
  for (;;) {
    auto st = call({"CLUSTER", "SYNCSLOTS", "STATUS", j->name});
    if (!st.ok()) return fail("control connection: " + st.status().message());
    if (*st == "+success") break;
    if (st->empty() || (*st)[0] != '+') return fail("the target: " + st->substr(1, 200));
    if (link->failed()) return fail("data link: " + link->error());
    if (MonoMs() > deadline) return fail("the target did not claim the slots in time");
    SleepUs(100);
  }
  while (hold_ == kHoldClaimed && !j->cancel) SleepUs(1000);  // the target serves them already
  {
    std::lock_guard lock(server_.mu());
    server_.cluster()->HandOverSlots(j->ranges, j->target);
    server_.UnpauseFor(Server::PausePurpose::kSlotMigration);
    j->pause_us = MonoUs() - pause_start_us;
    j->link = link->Describe();
    export_link_ = nullptr;
    // Done for the cluster: the target serves the slots. What is left is this node's copy.
    SetState(*j, "success", "deleting the keys migrated");
    j->deleting = true;
  }
  LOG_NOTICE("Slot migration %.8s: %s now served by %.40s (writes paused %lld us)", j->name.c_str(),
             cluster::FormatSlotRanges(j->ranges).c_str(), j->target.c_str(),
             static_cast<long long>(j->pause_us));
  link.reset();
  // The keys left here belong to slots this node no longer serves: deleted a slot at a time.
  uint64_t deleted = 0;
  for (const auto& r : j->ranges) {
    for (int s = r.first; s <= r.last; s++) {
      std::lock_guard lock(server_.mu());
      if (!server_.cluster()->ServesSlot(s)) deleted += server_.DeleteSlotKeys(s);
    }
  }
  {
    std::lock_guard lock(server_.mu());
    server_.cluster()->MarkExporting(j->ranges, false);
  }
  LOG_NOTICE("Slot migration %.8s: deleted the %llu keys migrated", j->name.c_str(),
             static_cast<unsigned long long>(deleted));
  return "";
}

std::string SlotMigrations::ExportByMigrate(Job* j, repl::LinkIo& io, const std::string& myid) {
  constexpr size_t kBatch = 100;  // keys per round trip
  auto call = [&](std::initializer_list<std::string_view> argv) -> Result<std::string> {
    KV_TRY(io.WriteAll(repl::ReplCommand(argv)));
    return io.ReadLine();
  };
  LOG_NOTICE(
      "Slot migration %.8s: the target has no whole-slot migration; moving the keys "
      "with RESTORE-ASKING, a slot at a time",
      j->name.c_str());
  {
    std::lock_guard lock(server_.mu());
    j->link = "RESTORE-ASKING over the control connection";
    SetState(*j, "snapshot");
  }
  std::vector<std::string> keys;
  std::string batch;
  for (const auto& r : j->ranges) {
    for (int s = r.first; s <= r.last; s++) {
      std::string slot = std::to_string(s);
      auto st = call({"CLUSTER", "SETSLOT", slot, "IMPORTING", myid});
      if (!st.ok()) return "control connection: " + st.status().message();
      if (*st != "+OK") return "the target refused SETSLOT IMPORTING: " + st->substr(0, 200);
      {
        std::lock_guard lock(server_.mu());
        if (j->cancel) return "cancelled";
        if (!server_.cluster()->ServesSlot(s)) return "slot " + slot + " was lost meanwhile";
        server_.cluster()->SetMigrating(s, j->target);
      }
      for (;;) {
        // The round trip holds the keyspace lock, as MIGRATE holds Redis: no write can come
        // between a key's copy and its deletion here.
        std::lock_guard lock(server_.mu());
        store::Db& db = server_.keyspace().db(0);
        auto slot_keys = db.SlotKeys(s);
        if (slot_keys.empty()) break;
        // Stopped midway, the slot stays open both ways (ASK serves its keys from either
        // node), as a reshard cut off leaves it: redis-cli --cluster fix closes it.
        if (j->cancel) return "cancelled with slot " + slot + " open";
        keys.clear();
        batch.clear();
        for (size_t i = 0; i < std::min(kBatch, slot_keys.size()); i++) {
          AppendRestore("RESTORE-ASKING", db, slot_keys[i], server_.keyspace().limits(), &batch);
          keys.emplace_back(slot_keys[i]->key());
        }
        Status w = io.WriteAll(batch);
        for (size_t i = 0; w.ok() && i < keys.size(); i++) {
          auto line = io.ReadLine();
          if (!line.ok())
            w = line.status();
          else if (*line != "+OK")
            w = Status::Invalid("the target: " + line->substr(0, 200));
        }
        if (!w.ok()) return "moving the keys of slot " + slot + ": " + w.message();
        for (const std::string& k : keys) server_.DeleteMovedKey(k);
        j->keys += keys.size();
        j->bytes += batch.size();
      }
      st = call({"CLUSTER", "SETSLOT", slot, "NODE", j->target});
      if (!st.ok()) return "control connection: " + st.status().message();
      if (*st != "+OK") return "the target refused SETSLOT NODE: " + st->substr(0, 200);
      std::lock_guard lock(server_.mu());
      cluster::SlotRange one{s, s};
      server_.cluster()->HandOverSlots(std::span(&one, 1), j->target);
      j->slots_sent++;
    }
  }
  return "";
}

}  // namespace kv::server
