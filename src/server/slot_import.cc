// Whole-slot migration, the target's side: CLUSTER SYNCSLOTS ESTABLISH and an import job's
// thread (see slot_migration.h).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "common/key_slot.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "net/socket.h"
#include "persist/aof_file.h"
#include "repl/datalink/data_link.h"
#include "repl/primary/primary.h"
#include "server/client.h"
#include "server/server.h"
#include "server/slot_migration.h"
#include "transport/channel.h"

namespace kv::server {

namespace {

// "0-99,200-200" (ESTABLISH's form); false when malformed.
bool ParseRanges(std::string_view text, std::vector<cluster::SlotRange>* out, int* slots) {
  *slots = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t dash = part.find('-');
    if (dash == std::string_view::npos) return false;
    auto first = ParseInt64(part.substr(0, dash)), last = ParseInt64(part.substr(dash + 1));
    if (!first || !last || *first < 0 || *last >= kClusterSlots || *first > *last) return false;
    out->push_back({static_cast<int>(*first), static_cast<int>(*last)});
    *slots += static_cast<int>(*last - *first + 1);
  }
  return !out->empty();
}

// The commands of a migration's stream that name no key: a unit's MULTI and EXEC, and the
// SELECT 0 the stream starts with.
bool IsFraming(std::span<const std::string_view> argv) {
  return (argv.size() == 1 &&
          (EqualsIgnoreCase(argv[0], "multi") || EqualsIgnoreCase(argv[0], "exec"))) ||
         (argv.size() == 2 && EqualsIgnoreCase(argv[0], "select") && argv[1] == "0");
}

bool IsEndMark(std::span<const std::string_view> argv) {
  return argv.size() == 3 && EqualsIgnoreCase(argv[0], "cluster") &&
         EqualsIgnoreCase(argv[1], "syncslots") && EqualsIgnoreCase(argv[2], "end");
}

// Bytes taken off the link before they are applied, at most (then they are applied first).
constexpr size_t kMaxPending = 4u << 20;
// How long the claim waits for this node's replicas to acknowledge the imported keys.
constexpr int64_t kReplicaAckTimeoutMs = 5000;

}  // namespace

// CLUSTER SYNCSLOTS ESTABLISH <name> <source-id> <ranges> <provider> <sender-blob>
void SlotMigrations::Establish(cmd::Context& c) {
  auto job = std::make_shared<Job>();
  job->name = std::string(c.arg(3));
  job->source = std::string(c.arg(4));
  if (!ParseRanges(c.arg(5), &job->ranges, &job->slots_total)) {
    c.Error("Invalid slot ranges " + std::string(c.arg(5)));
    return;
  }
  std::string peer;
  if (!HexDecode(c.arg(7), &peer)) {
    c.Error("Invalid data link setup");
    return;
  }
  if (importing_) {
    c.Error("Slot import " + importing_->name + " is running already");
    return;
  }
  cluster::Cluster* cl = server_.cluster();
  if (Status st = cl->CheckImport(job->ranges, job->source); !st.ok()) {
    c.Error(st.message());
    return;
  }
  store::Db& db = server_.keyspace().db(0);
  for (const auto& r : job->ranges) {
    for (int s = r.first; s <= r.last; s++) {
      if (db.KeysInSlot(s) > 0) {
        c.Error("I hold keys of hash slot " + std::to_string(s) + " already");
        return;
      }
    }
  }
  Config& cfg = server_.config();
  if (cfg.GetString("repl-transport") == "tcp" && c.arg(6) != "sockets") {
    c.Error("RDMA data plane disabled (repl-transport tcp)");
    return;
  }
  transport::ChannelOptions opts =
      repl::DataLinkOptions(std::string(c.arg(6)), cfg.GetString("repl-rdma-poll-mode"),
                            cfg.GetBool("repl-rdma-doorbell"));
  opts.bind_addr = net::LocalIp(server_.current_client().fd());
  auto rx = transport::CreateReceiver(opts, 0);
  Result<std::string> blob = rx.ok() ? (*rx)->LocalBlob() : Result<std::string>(rx.status());
  if (!blob.ok()) {
    LOG_WARNING("Slot import from %.40s: no data link (%s): %s", job->source.c_str(),
                std::string(c.arg(6)).c_str(), blob.status().message().c_str());
    c.Error("RDMA data link unavailable: " + blob.status().message());
    return;
  }
  job->exporting = false;
  job->target = cl->myid();
  job->create_s = job->update_s = WallMs() / 1000;
  job->control_client = c.session.id;
  job->link = (*rx)->Describe();
  SetState(*job, "connecting");
  importing_ = job.get();
  jobs_.push_back(job);
  TrimLog();
  Spawn(job, [this, j = job.get(), r = std::move(*rx), peer = std::move(peer)]() mutable {
    RunImport(j, std::move(r), std::move(peer));
  });
  c.out.Simple("RDMA " + HexEncode(*blob));
}

void SlotMigrations::RunImport(Job* j, std::unique_ptr<transport::StreamReceiver> rx,
                               std::string peer) {
  std::string error = Import(j, *rx, peer);
  rx.reset();
  std::lock_guard lock(server_.mu());
  if (!error.empty()) {
    DropImported(j);
    SetState(*j, j->cancel ? "cancelled" : "failed", error);
  }
  importing_ = nullptr;
  TrimLog();
}

void SlotMigrations::DropImported(Job* j) {
  uint64_t dropped = 0;
  for (const auto& r : j->ranges) {
    for (int s = r.first; s <= r.last; s++) {
      if (!server_.cluster()->ServesSlot(s)) dropped += server_.DeleteSlotKeys(s);
    }
  }
  if (dropped > 0) {
    LOG_NOTICE("Slot import %.8s: deleted the %llu keys it had brought", j->name.c_str(),
               static_cast<unsigned long long>(dropped));
  }
}

std::string SlotMigrations::AwaitReplicas(Job* j, int64_t offset,
                                          std::unique_lock<std::timed_mutex>& lock) {
  auto behind = [&] {
    int n = 0;
    for (const auto& r : server_.primary().ReplicaStatuses())
      n += r.online && r.ack_offset < offset;
    return n;
  };
  if (behind() == 0) return "";
  server_.primary().SendGetack();
  int64_t deadline = MonoMs() + kReplicaAckTimeoutMs;
  while (behind() > 0) {
    if (j->cancel) return "cancelled (the source went away or gave up)";
    if (MonoMs() > deadline) return "this node's replicas did not acknowledge the slots in time";
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    lock.lock();
  }
  return "";
}

// Applies what the data link brings until the end mark, then claims the slots; "" then, else
// why it stopped.
std::string SlotMigrations::Import(Job* j, transport::StreamReceiver& rx, const std::string& peer) {
  if (Status st = rx.Connect(peer); !st.ok()) return "data link: " + st.message();
  // The source's writes run as this client's: obeyed (no ACL, no redirection), and propagated
  // to this node's replicas and AOF as any write. Its replies are looked at, not sent: an
  // error means the copy went astray.
  std::unique_ptr<Client> writer;
  {
    std::lock_guard lock(server_.mu());
    SetState(*j, "importing");
    writer = std::make_unique<Client>(server_, server_.group(0), net::Fd(), server_.NextClientId());
    writer->session().authenticated = true;
    writer->session().obey = true;
    writer->set_flag(Client::kSlotImport, true);
  }
  struct Forget {  // the writer goes after this thread's last command
    Server& s;
    std::unique_ptr<Client>& w;
    ~Forget() {
      std::lock_guard lock(s.mu());
      s.set_current_client(nullptr);
      w.reset();
    }
  } forget{server_, writer};
  std::string pending;
  std::vector<std::vector<std::string_view>> cmds;
  int last_slot = -1;
  std::vector<bool> importing(kClusterSlots, false);
  for (const auto& r : j->ranges) {
    for (int s = r.first; s <= r.last; s++) importing[s] = true;
  }
  bool whole = true;  // `pending` holds no incomplete command (one may outgrow kMaxPending)
  for (;;) {
    if (j->cancel) return "cancelled (the source went away or gave up)";
    auto r = rx.Wait(100);
    if (!r.ok()) return "data link: " + r.status().message();
    bool got = false;
    for (auto span = rx.Peek(); !span.empty() && (pending.size() < kMaxPending || !whole);
         span = rx.Peek()) {
      pending.append(reinterpret_cast<const char*>(span.data()), span.size());
      if (Status st = rx.Consume(span.size()); !st.ok()) return "data link: " + st.message();
      got = true;
    }
    if (!got) {
      if (rx.eof()) return "the source ended the stream before the end mark";
      continue;
    }
    persist::AofCommandReader reader(pending);
    size_t n = 0, end = 0;
    persist::AofCommandReader::Next next;
    // The arguments' vectors are kept from batch to batch: no allocation per command.
    while (true) {
      if (n == cmds.size()) cmds.emplace_back();
      if ((next = reader.Read(&cmds[n])) != persist::AofCommandReader::Next::kCommand) break;
      n++;
      end = reader.offset();
    }
    if (next == persist::AofCommandReader::Next::kFormatError) {
      return "malformed stream: " + reader.error();
    }
    whole = end == pending.size();
    if (n == 0) continue;  // the rest of a command is on its way
    std::unique_lock lock(server_.mu());
    for (size_t i = 0; i < n; i++) {
      const std::vector<std::string_view>& a = cmds[i];
      if (IsEndMark(a)) {
        if (std::string why = AwaitReplicas(j, writer->write_offset(), lock); !why.empty()) {
          return why;
        }
        server_.cluster()->ClaimSlots(j->ranges);
        SetState(*j, "success");
        LOG_NOTICE("Slot import %.8s: %s served here now (%llu keys)", j->name.c_str(),
                   cluster::FormatSlotRanges(j->ranges).c_str(),
                   static_cast<unsigned long long>(j->keys));
        return "";
      }
      // Only writes to the slots it imports: a stream that says more is not a migration's.
      if (!IsFraming(a)) {
        std::string_view key = server_.FirstKey(a);
        if (key.empty() || !importing[KeyHashSlot(key)]) {
          return "the stream wrote outside the slots it imports (" + std::string(a[0]) + ")";
        }
      }
      server_.Execute(*writer, a);
      std::string& out = writer->out();
      if (!out.empty() && out[0] == '-') {
        return "the source's " + std::string(a[0]) +
               " failed here: " + out.substr(1, std::min<size_t>(out.find('\r'), 200) - 1);
      }
      out.clear();
      if (a.size() > 1 && EqualsIgnoreCase(a[0], "restore")) {  // the snapshot, slot by slot
        j->keys++;
        if (int slot = KeyHashSlot(a[1]); slot != last_slot) {
          last_slot = slot;
          j->slots_sent++;
        }
      }
    }
    server_.set_current_client(nullptr);
    j->bytes += end;
    pending.erase(0, end);
  }
}

}  // namespace kv::server
