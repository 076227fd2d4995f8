// Whole-slot migration's commands, jobs and INFO (see slot_migration.h).
#include "server/slot_migration.h"

#include <algorithm>

#include "common/clock.h"
#include "common/key_slot.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/datalink/data_link.h"
#include "server/server.h"

namespace kv::server {

namespace {

bool Is(std::string_view a, std::string_view b) { return EqualsIgnoreCase(a, b); }

// A slot number argument, or -1.
int SlotArg(std::string_view s) {
  std::optional<int64_t> v = ParseInt64(s);
  if (!v || *v < 0 || *v >= kClusterSlots) return -1;
  return static_cast<int>(*v);
}

}  // namespace

SlotMigrations::SlotMigrations(Server& server) : server_(server) {}

SlotMigrations::~SlotMigrations() { Stop(); }

void SlotMigrations::Stop() {
  std::vector<Runner> runners;
  {
    std::lock_guard lock(server_.mu());
    for (auto& j : jobs_) j->cancel = true;
    runners.swap(runners_);
  }
  for (Runner& r : runners) {
    if (r.thread.joinable()) r.thread.join();
  }
}

void SlotMigrations::ReapThreads() {
  for (auto it = runners_.begin(); it != runners_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = runners_.erase(it);
    } else {
      ++it;
    }
  }
}

void SlotMigrations::SetState(Job& j, std::string state, std::string message) {
  if (j.state != state) {
    LOG_NOTICE("Slot migration %.8s (%s %s): %s%s%s", j.name.c_str(),
               j.exporting ? "export to" : "import from",
               (j.exporting ? j.target : j.source).substr(0, 8).c_str(), state.c_str(),
               message.empty() ? "" : ": ", message.c_str());
  }
  j.state = std::move(state);
  j.message = std::move(message);
  j.update_s = WallMs() / 1000;
}

void SlotMigrations::TrimLog() {
  size_t finished = 0;
  for (const auto& j : jobs_) finished += j->finished();
  for (auto it = jobs_.begin(); it != jobs_.end() && finished > kKeepFinished;) {
    if ((*it)->finished() && it->get() != exporting_ && it->get() != importing_) {
      it = jobs_.erase(it);
      finished--;
    } else {
      ++it;
    }
  }
}

void SlotMigrations::Command(cmd::Context& c) {
  ReapThreads();
  std::string_view sub = c.arg(1);
  if (Is(sub, "migrateslots")) {
    MigrateSlots(c);
  } else if (Is(sub, "getslotmigrations") && c.argc() == 2) {
    ReplyJobs(c);
  } else if (Is(sub, "cancelslotmigrations") && c.argc() == 2) {
    for (auto& j : jobs_) {
      if (!j->exporting || j->finished()) continue;
      j->cancel = true;
      if (j->state == "queued") SetState(*j, "cancelled", "cancelled before it started");
    }
    c.out.Ok();
  } else if (Is(sub, "syncslots")) {
    SyncSlots(c);
  } else {
    c.Error("unknown subcommand or wrong number of arguments for '" + std::string(sub) +
            "'. Try CLUSTER HELP.");
  }
}

// CLUSTER MIGRATESLOTS SLOTSRANGE start end [start end ...] NODE id [SLOTSRANGE ... NODE id]:
// one export job per NODE block, all or none started, run one after the other.
void SlotMigrations::MigrateSlots(cmd::Context& c) {
  cluster::Cluster* cl = server_.cluster();
  std::vector<std::shared_ptr<Job>> jobs;
  std::vector<bool> claimed(kClusterSlots, false), busy(kClusterSlots, false);
  for (const auto& j : jobs_) {  // slots a job not finished yet moves already
    if (!j->exporting || j->finished()) continue;
    for (const auto& r : j->ranges) {
      std::fill(busy.begin() + r.first, busy.begin() + r.last + 1, true);
    }
  }
  size_t i = 2;
  while (i < c.argc()) {
    if (!Is(c.arg(i), "slotsrange")) {
      c.Error("syntax error");
      return;
    }
    auto job = std::make_shared<Job>();
    i++;
    while (i + 1 < c.argc() && !Is(c.arg(i), "node")) {
      int first = SlotArg(c.arg(i)), last = SlotArg(c.arg(i + 1));
      if (first < 0 || last < 0) {
        c.Error("Invalid or out of range slot");
        return;
      }
      if (first > last) {
        c.Error("start slot number " + std::to_string(first) + " is greater than end slot number " +
                std::to_string(last));
        return;
      }
      for (int s = first; s <= last; s++) {
        if (busy[s]) {
          c.Error("Slot " + std::to_string(s) + " is already being migrated");
          return;
        }
        if (claimed[s]) {
          c.Error("Slot " + std::to_string(s) + " specified multiple times");
          return;
        }
        claimed[s] = true;
      }
      job->ranges.push_back({first, last});
      job->slots_total += last - first + 1;
      i += 2;
    }
    if (job->ranges.empty() || i + 1 >= c.argc() || !Is(c.arg(i), "node")) {
      c.Error("syntax error");
      return;
    }
    job->target = std::string(c.arg(i + 1));
    i += 2;
    std::string ip;
    int port;
    if (Status st = cl->CheckExport(job->ranges, job->target, &ip, &port); !st.ok()) {
      c.Error(st.message());
      return;
    }
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) {
    c.Error("syntax error");
    return;
  }
  int64_t now_s = WallMs() / 1000;
  for (auto& j : jobs) {
    j->name = cluster::RandomName();
    j->exporting = true;
    j->source = cl->myid();
    j->create_s = j->update_s = now_s;
    j->state = "queued";
    LOG_NOTICE("Slot migration %.8s: slots %s to %.40s requested", j->name.c_str(),
               cluster::FormatSlotRanges(j->ranges).c_str(), j->target.c_str());
    jobs_.push_back(std::move(j));
  }
  StartNextExport();
  TrimLog();
  c.out.Ok();
}

void SlotMigrations::StartNextExport() {
  if (exporting_) return;
  for (auto& j : jobs_) {
    if (!j->exporting || j->state != "queued") continue;
    exporting_ = j.get();
    Spawn(j, [this, j] { RunExport(j.get()); });
    return;
  }
}

// CLUSTER SYNCSLOTS, the source's requests on the control connection (kvstore to kvstore):
// ESTABLISH <name> <source-id> <ranges> <provider> <sender-blob> (slot_import.cc), STATUS
// <name> (+<state>, or the error that ended it), ABORT <name>.
void SlotMigrations::SyncSlots(cmd::Context& c) {
  std::string_view op = c.argc() > 2 ? c.arg(2) : "";
  if (Is(op, "establish") && c.argc() == 8) {
    Establish(c);
    return;
  }
  if (!(Is(op, "status") || Is(op, "abort")) || c.argc() != 4) {
    c.Error("unknown subcommand or wrong number of arguments for 'SYNCSLOTS'");
    return;
  }
  auto it = std::find_if(jobs_.begin(), jobs_.end(),
                         [&](const auto& j) { return !j->exporting && j->name == c.arg(3); });
  if (it == jobs_.end()) {
    c.Error("No slot import named " + std::string(c.arg(3)));
    return;
  }
  Job& j = **it;
  if (Is(op, "abort")) {
    j.cancel = true;
    c.out.Ok();
  } else if (j.state == "failed" || j.state == "cancelled") {
    c.Error("Slot import " + j.state + ": " + j.message);
  } else {
    c.out.Simple(j.state);
  }
}

void SlotMigrations::ReplyJobs(cmd::Context& c) {
  resp::ReplyWriter& w = c.out;
  w.Array(jobs_.size());
  for (const auto& j : jobs_) {
    w.Map(14);
    w.Bulk("name");
    w.Bulk(j->name);
    w.Bulk("operation");
    w.Bulk(j->exporting ? "EXPORT" : "IMPORT");
    w.Bulk("slot_ranges");
    w.Bulk(cluster::FormatSlotRanges(j->ranges));
    w.Bulk("target_node");
    w.Bulk(j->target);
    w.Bulk("source_node");
    w.Bulk(j->source);
    w.Bulk("create_time");
    w.Int(j->create_s);
    w.Bulk("last_update_time");
    w.Int(j->update_s);
    w.Bulk("state");
    w.Bulk(j->state);
    w.Bulk("message");
    w.Bulk(j->message);
    // kvstore's own: the progress, the hand-over's pause, the data link.
    w.Bulk("slots_sent");
    w.Int(j->slots_sent);
    w.Bulk("keys");
    w.Int(static_cast<int64_t>(j->keys));
    w.Bulk("bytes");
    w.Int(static_cast<int64_t>(j->bytes));
    w.Bulk("pause_us");
    w.Int(j->pause_us);
    w.Bulk("link");
    w.Bulk(j->link);
  }
}

void SlotMigrations::OnClientClosed(uint64_t id) {
  if (importing_ && importing_->control_client == id && !importing_->finished() &&
      importing_->state != "claimed") {
    importing_->cancel = true;
  }
}

void SlotMigrations::BreakDataLink(uint64_t after) {
  if (export_link_) export_link_->FailAfter(after);
}

bool SlotMigrations::Hold(std::string_view step) {
  constexpr std::pair<std::string_view, HoldStep> kSteps[] = {{"none", kHoldNone},
                                                              {"streaming", kHoldStreaming},
                                                              {"handover", kHoldHandover},
                                                              {"claimed", kHoldClaimed}};
  for (const auto& [name, s] : kSteps) {
    if (EqualsIgnoreCase(step, name)) {
      hold_ = s;
      return true;
    }
  }
  return false;
}

void SlotMigrations::Info(std::string* out) {
  int exports = 0, imports = 0;
  for (const auto& j : jobs_) {
    if (j->finished()) continue;
    (j->exporting ? exports : imports)++;
  }
  *out += "slot_migration_exports_active:" + std::to_string(exports) + "\r\n";
  *out += "slot_migration_imports_active:" + std::to_string(imports) + "\r\n";
  int n = 0;
  for (const auto& j : jobs_) {
    double pct = j->slots_total ? 100.0 * j->slots_sent / j->slots_total : 0;
    char line[512];
    snprintf(line, sizeof(line),
             "slot_migration_%d:name=%s,operation=%s,slots=%s,state=%s,deleting=%d,slots_sent=%d,"
             "slots_total=%d,progress=%.1f%%,keys=%llu,bytes=%llu,pause_us=%lld,link=%s\r\n",
             n++, j->name.c_str(), j->exporting ? "export" : "import",
             cluster::FormatSlotRanges(j->ranges).c_str(), j->state.c_str(), j->deleting ? 1 : 0,
             j->slots_sent, j->slots_total, pct, static_cast<unsigned long long>(j->keys),
             static_cast<unsigned long long>(j->bytes), static_cast<long long>(j->pause_us),
             j->link.empty() ? "-" : j->link.c_str());
    *out += line;
  }
}

}  // namespace kv::server
