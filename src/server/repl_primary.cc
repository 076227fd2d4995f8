#include "server/repl_primary.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/hash.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "persist/snapshot.h"
#include "server/client.h"
#include "server/persistence.h"
#include "server/repl_replica.h"
#include "server/server.h"

namespace kv::server {
namespace {

std::string RandomHex40() {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 40; i++) s += kHex[RandomBelow(16)];
  return s;
}

// Writes all of `data` to a non-blocking socket, waiting for room with poll (a snapshot child,
// or the few bytes of +FULLRESYNC). Gives up after `timeout_ms` without progress.
class PollingSink : public persist::Sink {
 public:
  PollingSink(int fd, int timeout_ms) : fd_(fd), timeout_ms_(timeout_ms) {}
  Status Write(const void* data, size_t len) override {
    const char* p = static_cast<const char*>(data);
    while (len > 0) {
      ssize_t n = ::write(fd_, p, len);
      if (n > 0) {
        p += n;
        len -= static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN) return Status::FromErrno("write to replica", errno);
      pollfd pfd{fd_, POLLOUT, 0};
      int r = poll(&pfd, 1, timeout_ms_);
      if (r == 0) return Status::IoError("replica did not read for too long");
      if (r < 0 && errno != EINTR) return Status::FromErrno("poll", errno);
    }
    return Status::Ok();
  }

 private:
  int fd_;
  int timeout_ms_;
};

const char* StateName(int s) {
  static const char* kNames[] = {"wait_bgsave", "send_bulk", "online"};
  return kNames[s];
}

}  // namespace

ReplPrimary::ReplPrimary(Server& server) : server_(server), replid_(RandomHex40()) {
  replid2_.assign(40, '0');
  feed_.set_sink([this](std::string_view b) { OnStream(b); });
}

ReplPrimary::~ReplPrimary() {
  if (child_pid_ > 0) {
    kill(child_pid_, SIGUSR1);
    waitpid(child_pid_, nullptr, 0);
  }
}

void ReplPrimary::SetHistory(const std::string& replid, int64_t offset) {
  replid_ = replid;
  replid2_.assign(40, '0');
  second_offset_ = -1;
  feed_.FreeBacklog();
  feed_.CreateBacklog(static_cast<size_t>(server_.config().GetInt("repl-backlog-size")), offset);
}

void ReplPrimary::ShiftReplid(const std::string& next) {
  replid2_ = replid_;
  second_offset_ = feed_.offset() + 1;
  replid_ = next;
  LOG_NOTICE("Setting secondary replication ID to %s, valid up to offset: %lld. New replication "
             "ID is %s", replid2_.c_str(), static_cast<long long>(second_offset_), replid_.c_str());
}

void ReplPrimary::ContinueWith(const std::string& replid) { ShiftReplid(replid); }

void ReplPrimary::Promote() {
  ShiftReplid(RandomHex40());
  // They learn the new ID by reconnecting (and resync partially, through replid2).
  DisconnectReplicas();
  if (!feed_.active()) {
    feed_.CreateBacklog(static_cast<size_t>(server_.config().GetInt("repl-backlog-size")),
                        feed_.offset());
  }
  feed_.ForgetSelectedDb();
}

void ReplPrimary::ProxyStream(std::string_view raw) {
  if (!feed_.active()) {
    feed_.CreateBacklog(static_cast<size_t>(server_.config().GetInt("repl-backlog-size")),
                        feed_.offset());
  }
  feed_.EmitBytes(raw);
}

void ReplPrimary::DisconnectReplicas() {
  for (auto& r : replicas_) r->client->RequestClose();
}

void ReplPrimary::Role(cmd::Context& c) const {
  c.out.Array(3);
  c.out.Bulk("master");
  c.out.Int(feed_.offset());
  size_t online = 0;
  for (const auto& r : replicas_) online += r->state == State::kOnline;
  c.out.Array(online);
  for (const auto& r : replicas_) {
    if (r->state != State::kOnline) continue;
    c.out.Array(3);
    c.out.Bulk(r->ip);
    c.out.Bulk(std::to_string(r->listening_port));
    c.out.Bulk(std::to_string(r->ack_offset));
  }
}

ReplPrimary::Replica* ReplPrimary::Find(Client* c) {
  for (auto& r : replicas_) {
    if (r->client == c) return r.get();
  }
  return nullptr;
}

void ReplPrimary::OnClientClosed(Client* c) {
  std::erase_if(replicas_, [&](const auto& r) {
    if (r->client != c) return false;
    LOG_NOTICE("Connection with replica %s lost.", c->peer().c_str());
    return true;
  });
}

void ReplPrimary::OnStream(std::string_view bytes) {
  // Redis' client-output-buffer-limit for replicas (256mb hard, 64mb soft for 60 s).
  constexpr size_t kHard = 256u << 20, kSoft = 64u << 20;
  for (auto& r : replicas_) {
    if (r->state == State::kOnline) {
      r->client->Push(bytes, kHard, kSoft, 60);
    } else if (r->state == State::kSendingSnapshot) {
      r->held.append(bytes);
    }
  }
}

void ReplPrimary::Replconf(cmd::Context& c) {
  if (c.argc() % 2 == 0) {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  Client& client = server_.current_client();
  for (size_t i = 1; i + 1 < c.argc(); i += 2) {
    std::string_view opt = c.arg(i), val = c.arg(i + 1);
    if (EqualsIgnoreCase(opt, "listening-port")) {
      int64_t port;
      if (!c.ParseInt(val, &port)) return;
      if (Replica* r = Find(&client)) r->listening_port = static_cast<int>(port);
      pending_port_[client.id()] = static_cast<int>(port);
    } else if (EqualsIgnoreCase(opt, "ack") || EqualsIgnoreCase(opt, "fack")) {
      // ACKs get no reply; they only count for a replica.
      if (Replica* r = Find(&client); r && EqualsIgnoreCase(opt, "ack")) {
        r->ack_offset = ParseInt64(val).value_or(r->ack_offset);
        r->ack_ms = WallMs();
      }
      return;
    } else if (EqualsIgnoreCase(opt, "getack")) {
      // Our primary asks where we are.
      if (client.flags() & Client::kMaster) server_.replica().SendAck();
      return;
    } else if (EqualsIgnoreCase(opt, "ip-address") || EqualsIgnoreCase(opt, "capa") ||
               EqualsIgnoreCase(opt, "rdb-only") || EqualsIgnoreCase(opt, "rdb-filter-only")) {
      // Accepted; kvstore always sends the $EOF: framing and PSYNC2 replies.
    } else {
      c.Error("Unrecognized REPLCONF option: " + std::string(opt));
      return;
    }
  }
  c.out.Ok();
}

ReplPrimary::Replica* ReplPrimary::Register(Client& c) {
  auto r = std::make_unique<Replica>();
  r->client = &c;
  r->state = State::kWaitSnapshot;
  r->since_ms = WallMs();
  r->ack_ms = r->since_ms;
  std::string peer = c.peer();
  r->ip = peer.substr(0, peer.rfind(':'));
  if (auto it = pending_port_.find(c.id()); it != pending_port_.end()) {
    r->listening_port = it->second;
    pending_port_.erase(it);
  }
  c.set_flag(Client::kReplica, true);
  replicas_.push_back(std::move(r));
  if (!feed_.active()) {
    // The first replica creates the backlog and starts a new history, as Redis does.
    replid_ = RandomHex40();
    replid2_.assign(40, '0');
    second_offset_ = -1;
    feed_.CreateBacklog(static_cast<size_t>(server_.config().GetInt("repl-backlog-size")),
                        feed_.offset());
  }
  return replicas_.back().get();
}

bool ReplPrimary::TryPartial(cmd::Context& c, Client& client, std::string_view replid,
                             int64_t offset) {
  if (!feed_.active()) return false;
  bool ours = replid == replid_ || (replid == replid2_ && offset <= second_offset_);
  std::string data;
  // PSYNC names the next byte it wants (1-based), i.e. processed bytes + 1.
  if (!ours || !feed_.backlog()->CopySince(offset - 1, &data)) return false;
  Replica* r = Register(client);
  r->state = State::kOnline;
  c.out.Simple("CONTINUE " + replid_);
  if (!data.empty()) client.Push(data);
  LOG_NOTICE("Partial resynchronization request from %s accepted. Sending %zu bytes of backlog "
             "starting from offset %lld.", client.peer().c_str(), data.size(),
             static_cast<long long>(offset));
  return true;
}

void ReplPrimary::Psync(cmd::Context& c) {
  Client& client = server_.current_client();
  if (Find(&client)) return;  // already a replica: ignored, as in Redis
  if (client.flags() & Client::kMulti) {
    c.Error("Replica can't be in MULTI");  // not reached: PSYNC is no-multi
    return;
  }
  if (server_.replica().is_replica() && !server_.replica().link_up()) {
    c.Error("-NOMASTERLINK Can't SYNC while not connected with my master");
    return;
  }
  bool psync = EqualsIgnoreCase(c.arg(0), "psync");
  if (psync && c.argc() == 3) {
    auto offset = ParseInt64(c.arg(2));
    if (offset && TryPartial(c, client, c.arg(1), *offset)) return;
  }
  LOG_NOTICE("Replica %s asks for synchronization", client.peer().c_str());
  LOG_NOTICE("Full resync requested by replica %s", client.peer().c_str());
  Register(client);
  // The reply (+FULLRESYNC) is written when the snapshot starts (Cron).
}

void ReplPrimary::StartSnapshot(int64_t now_ms) {
  std::vector<Replica*> batch;
  int64_t delay_ms = server_.config().GetInt("repl-diskless-sync-delay") * 1000;
  int64_t oldest = INT64_MAX;
  for (auto& r : replicas_) {
    if (r->state == State::kWaitSnapshot) {
      batch.push_back(r.get());
      oldest = std::min(oldest, r->since_ms);
    }
  }
  if (batch.empty() || now_ms - oldest < delay_ms) return;
  if (server_.persistence().child_running()) return;  // one child at a time
  int64_t offset = feed_.offset();
  // The stream restarts with a SELECT for whoever joins now.
  feed_.ForgetSelectedDb();
  std::vector<int> fds;
  std::string reply = "+FULLRESYNC " + replid_ + " " + std::to_string(offset) + "\r\n";
  for (Replica* r : batch) {
    PollingSink sink(r->client->fd(), 1000);
    if (!sink.Write(reply.data(), reply.size()).ok()) {
      r->client->RequestClose();
      continue;
    }
    fds.push_back(r->client->fd());
  }
  pid_t pid = fork();
  if (pid < 0) {
    LOG_WARNING("Can't start the replication snapshot: fork: %s", strerror(errno));
    for (Replica* r : batch) r->client->RequestClose();
    return;
  }
  if (pid == 0) RunChild(fds, offset);
  child_pid_ = pid;
  for (Replica* r : batch) r->state = State::kSendingSnapshot;
  LOG_NOTICE("Starting BGSAVE for SYNC with target: replicas sockets (pid %d, %zu replica(s))",
             static_cast<int>(pid), batch.size());
}

void ReplPrimary::RunChild(const std::vector<int>& fds, int64_t offset) {
  SetLogRole('C');
  server_.CloseListenersInChild();
  std::string mark = RandomHex40();
  persist::SnapshotInfo info;
  info.version = kRedisCompatVersion;
  info.has_repl = true;
  info.repl_id = replid_;
  info.repl_offset = offset;
  persist::RdbWriteOptions opts;
  opts.compression = server_.config().GetBool("rdbcompression");
  opts.limits = server_.keyspace().limits();
  int timeout_ms = static_cast<int>(server_.config().GetInt("repl-timeout") * 1000);
  bool ok = true;
  // One replica after the other: each gets the whole snapshot from the same (copy-on-write)
  // memory image.
  for (int fd : fds) {
    PollingSink sink(fd, timeout_ms);
    std::string head = "$EOF:" + mark + "\r\n";
    Status st = sink.Write(head.data(), head.size());
    if (st.ok()) st = persist::WriteRdb(server_.keyspace(), sink, opts, persist::StandardAux(info), nullptr);
    if (st.ok()) st = sink.Write(mark.data(), mark.size());
    if (!st.ok()) {
      LOG_WARNING("Snapshot transfer to a replica failed: %s", st.message().c_str());
      ok = false;
    }
  }
  _exit(ok ? 0 : 1);
}

void ReplPrimary::SnapshotDone(bool ok) {
  for (auto& r : replicas_) {
    if (r->state != State::kSendingSnapshot) continue;
    if (!ok) {
      r->client->RequestClose();
      continue;
    }
    r->state = State::kOnline;
    r->ack_ms = WallMs();
    if (!r->held.empty()) r->client->Push(r->held);
    r->held.clear();
    r->held.shrink_to_fit();
    LOG_NOTICE("Synchronization with replica %s succeeded", r->client->peer().c_str());
  }
}

void ReplPrimary::Cron(int64_t now_ms) {
  if (child_pid_ > 0) {
    int status = 0;
    if (waitpid(child_pid_, &status, WNOHANG) == child_pid_) {
      child_pid_ = -1;
      SnapshotDone(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
  }
  if (child_pid_ < 0) StartSnapshot(now_ms);
  int64_t period_ms = server_.config().GetInt("repl-ping-replica-period") * 1000;
  // A replica passes its primary's PINGs on instead of making its own.
  if (!replicas_.empty() && now_ms - last_ping_ms_ >= period_ms &&
      !server_.replica().is_replica()) {
    last_ping_ms_ = now_ms;
    std::string_view ping[] = {"PING"};
    feed_.EmitRaw(ping);
  }
}

void ReplPrimary::AppendInfo(std::string* out, int64_t now_ms, bool role) const {
  char buf[512];
  if (role) out->append("role:master\r\n");
  snprintf(buf, sizeof(buf), "connected_slaves:%zu\r\n", replicas_.size());
  out->append(buf);
  for (size_t i = 0; i < replicas_.size(); i++) {
    const Replica& r = *replicas_[i];
    snprintf(buf, sizeof(buf), "slave%zu:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", i,
             r.ip.c_str(), r.listening_port, StateName(static_cast<int>(r.state)),
             static_cast<long long>(r.ack_offset),
             static_cast<long long>((now_ms - r.ack_ms) / 1000));
    out->append(buf);
  }
  const repl::Backlog* b = const_cast<repl::Feed&>(feed_).backlog();
  snprintf(buf, sizeof(buf),
           "master_failover_state:no-failover\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
           "master_repl_offset:%lld\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
           "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%lld\r\n"
           "repl_backlog_histlen:%zu\r\n",
           replid_.c_str(), replid2_.c_str(), static_cast<long long>(feed_.offset()),
           static_cast<long long>(second_offset_), b ? 1 : 0,
           static_cast<long long>(server_.config().GetInt("repl-backlog-size")),
           static_cast<long long>(b ? b->first_byte_offset() : 0), b ? b->histlen() : 0);
  out->append(buf);
}

void RegisterReplCommands(cmd::CommandTable& t) {
  using namespace cmd;
  for (const char* name : {"replicaof", "slaveof"}) {
    t.Add({.name = name,
           .arity = 3,
           .flags = kAdmin | kNoScript | kStale,
           .handler = [](Context& c) { ServerOf(c).replica().ReplicaOf(c); },
           .group = "server",
           .summary = "Configure a server as replica of another, or promote it to a master.",
           .since = name[0] == 'r' ? "5.0.0" : "1.0.0"});
  }
  t.Add({.name = "role",
         .arity = 1,
         .flags = kNoScript | kLoading | kStale | kFast,
         .handler =
             [](Context& c) {
               Server& s = ServerOf(c);
               if (s.replica().is_replica()) {
                 s.replica().Role(c);
               } else {
                 s.primary().Role(c);
               }
             },
         .group = "server",
         .summary = "Return the role of the instance in the context of replication",
         .since = "2.8.12"});
  t.Add({.name = "replconf",
         .arity = -1,
         .flags = kAdmin | kNoScript | kLoading | kStale,
         .handler = [](Context& c) { ServerOf(c).primary().Replconf(c); },
         .group = "server",
         .summary = "An internal command for configuring the replication stream",
         .since = "3.0.0"});
  t.Add({.name = "psync",
         .arity = -3,
         .flags = kAdmin | kNoScript | kNoMulti,
         .handler = [](Context& c) { ServerOf(c).primary().Psync(c); },
         .group = "server",
         .summary = "An internal command used in replication",
         .since = "2.8.0"});
  t.Add({.name = "sync",
         .arity = 1,
         .flags = kAdmin | kNoScript | kNoMulti,
         .handler = [](Context& c) { ServerOf(c).primary().Psync(c); },
         .group = "server",
         .summary = "An internal command used in replication",
         .since = "1.0.0"});
}

}  // namespace kv::server
