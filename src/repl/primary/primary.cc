#include "repl/primary/primary.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/hash.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "net/socket.h"
#include "repl/datalink/link_io.h"

namespace kv::repl {
namespace {

// How long a data link that failed mid-snapshot waits for the replica to rebuild it before the
// connection is dropped (and the replica resyncs).
constexpr int64_t kDataLinkResumeGraceMs = 5000;

}  // namespace

std::string RandomHex40() {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 40; i++) s += kHex[RandomBelow(16)];
  return s;
}

Primary::Primary(Host& host) : host_(host), replid_(RandomHex40()) {
  replid2_.assign(40, '0');
  feed_.set_sink([this](std::string_view b) { OnStream(b); });
}

Primary::~Primary() {
  if (child_pid_ > 0) {
    kill(child_pid_, SIGUSR1);
    waitpid(child_pid_, nullptr, 0);
  }
}

void Primary::SetHistory(const std::string& replid, int64_t offset) {
  replid_ = replid;
  replid2_.assign(40, '0');
  second_offset_ = -1;
  feed_.FreeBacklog();
  feed_.CreateBacklog(static_cast<size_t>(host_.ConfigInt("repl-backlog-size")), offset);
}

void Primary::ShiftReplid(const std::string& next) {
  replid2_ = replid_;
  second_offset_ = feed_.offset() + 1;
  replid_ = next;
  LOG_NOTICE(
      "Setting secondary replication ID to %s, valid up to offset: %lld. New replication "
      "ID is %s",
      replid2_.c_str(), static_cast<long long>(second_offset_), replid_.c_str());
}

void Primary::ContinueWith(const std::string& replid) {
  ShiftReplid(replid);
  // Sub-replicas learn the new ID by reconnecting (and continue through replid2), as in Redis.
  DisconnectReplicas();
}

void Primary::ChangeReplId() {
  replid_ = RandomHex40();
  replid2_.assign(40, '0');
  second_offset_ = -1;
}

void Primary::Promote() {
  ShiftReplid(RandomHex40());
  // They learn the new ID by reconnecting (and resync partially, through replid2).
  DisconnectReplicas();
  if (!feed_.active()) {
    feed_.CreateBacklog(static_cast<size_t>(host_.ConfigInt("repl-backlog-size")), feed_.offset());
  }
  feed_.ForgetSelectedDb();
}

void Primary::ProxyStream(std::string_view raw) {
  if (!feed_.active()) {
    feed_.CreateBacklog(static_cast<size_t>(host_.ConfigInt("repl-backlog-size")), feed_.offset());
  }
  feed_.EmitBytes(raw);
}

void Primary::DisconnectReplicas() {
  for (auto& r : replicas_) r->client->RequestClose();
}

void Primary::Role(cmd::Context& c) const {
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

Primary::AttachedReplica* Primary::Find(ClientConn* c) {
  for (auto& r : replicas_) {
    if (r->client == c) return r.get();
  }
  return nullptr;
}

void Primary::OnClientClosed(ClientConn* c) {
  if (auto it = announced_.find(c->id()); it != announced_.end()) {
    DropDataLink(std::move(it->second.data));
    announced_.erase(it);
  }
  std::erase_if(waiters_, [&](const Waiter& w) { return w.client == c; });
  bool was_waiting = false;
  std::erase_if(replicas_, [&](const auto& r) {
    if (r->client != c) return false;
    was_waiting = r->state == State::kSendingSnapshot && !r->file_on_link;
    DropDataLink(std::move(r->data));
    LOG_NOTICE("Connection with replica %s lost.", c->peer().c_str());
    return true;
  });
  if (was_waiting) KillSnapshotIfUseless();
  UpdateNeededFrom();
  if (Backlog* b = feed_.backlog()) b->Trim();
}

void Primary::OnStream(std::string_view bytes) {
  // The bytes are in the shared buffer already: sockets read them from there.
  // client-output-buffer-limit replica: a replica that cannot keep up is cut off (it resyncs).
  for (auto& r : replicas_) {
    if (r->data) {
      // A data link sends the snapshot first, then these.
      if (r->state == State::kOnline || r->state == State::kSendingSnapshot) SendTo(*r, bytes);
    } else if (r->pin.valid()) {
      OverOutputLimit(*r, Unsent(*r));
    } else if (r->state == State::kOnline && !OverOutputLimit(*r, Unsent(*r))) {
      r->client->StreamMore();
    }
  }
  // Append trimmed with what the replicas needed before these bytes: one that was cut off
  // meanwhile (CLIENT KILL in the same EXEC, an output limit) must not keep the history its
  // reconnection would resync from.
  UpdateNeededFrom();
  if (Backlog* b = feed_.backlog()) b->Trim();
}

void Primary::UpdateNeededFrom() {
  Backlog* b = feed_.backlog();
  if (!b) return;
  int64_t from = INT64_MAX;
  for (const auto& r : replicas_) {
    if (r->data || r->over_limit || r->client->closing()) continue;  // a data link has copies
    if (r->pin.valid()) {
      from = std::min(from, r->pin.offset());
    } else if (r->state == State::kOnline) {
      from = std::min(from, r->client->stream_sent());
    }
  }
  b->set_needed_from(from);
}

size_t Primary::Unsent(const AttachedReplica& r) const {
  if (r.data) return r.data->Unsent() + r.data_batch.size();
  int64_t from = r.pin.valid() ? r.pin.offset() : r.client->stream_sent();
  return static_cast<size_t>(std::max<int64_t>(feed_.offset() - from, 0)) +
         r.client->output_pending();
}

bool Primary::OverOutputLimit(AttachedReplica& r, size_t pending) {
  if (r.over_limit) return true;
  // A hard limit under repl-backlog-size counts as that size, as in Redis: a partial resync
  // the backlog accepts must not be cut off by the limit at once (the replica shares the
  // backlog's memory anyway).
  net::OutputLimit limit = host_.replica_limits();
  if (const Backlog* b = feed_.backlog(); b && limit.hard)
    limit.hard = std::max(limit.hard, b->capacity());
  if (!limit.Exceeded(pending, MonoMs(), &r.over_soft_since_ms)) return false;
  r.client->LogOverLimit();
  r.over_limit = true;
  r.pin = Backlog::Cursor();  // its blocks need not be kept for it any more
  r.client->RequestClose();
  return true;
}

void Primary::SendTo(AttachedReplica& r, std::string_view bytes) {
  if (hold_data_links_) {
    r.data_batch.append(bytes);
  } else if (!OverOutputLimit(r, r.data->Unsent() + bytes.size())) {
    r.data->Enqueue(bytes);
    r.data->Kick();
  }
}

void Primary::ResizeBacklog(size_t bytes) {
  if (feed_.backlog()) feed_.backlog()->Resize(bytes);
}

void Primary::ReplicaNewline(ClientConn& client) {
  if (AttachedReplica* r = Find(&client)) r->ack_ms = WallMs();
}

void Primary::Replconf(cmd::Context& c, ClientConn& client) {
  bool two_values = c.argc() == 4 && (EqualsIgnoreCase(c.arg(1), "rdma") ||
                                      EqualsIgnoreCase(c.arg(1), "rdma-resume"));
  if (c.argc() % 2 == 0 && !two_values) {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  for (size_t i = 1; i + 1 < c.argc(); i += 2) {
    std::string_view opt = c.arg(i), val = c.arg(i + 1);
    if (EqualsIgnoreCase(opt, "listening-port")) {
      int64_t port;
      if (!c.ParseInt(val, &port)) return;
      if (AttachedReplica* r = Find(&client)) r->listening_port = static_cast<int>(port);
      announced_[client.id()].port = static_cast<int>(port);
    } else if (EqualsIgnoreCase(opt, "ack") || EqualsIgnoreCase(opt, "fack")) {
      // ACKs get no reply; they only count for a replica.
      if (AttachedReplica* r = Find(&client); r && EqualsIgnoreCase(opt, "ack")) {
        if (r->file_on_link) PutOnline(*r);  // it loaded the file: it was delivered
        r->ack_offset = ParseInt64(val).value_or(r->ack_offset);
        r->ack_ms = WallMs();
        r->acked = true;
        if (r->stream_on_ack) StartStream(*r);
        if (!waiters_.empty()) ServeWaiters(r->ack_ms);
      }
      return;
    } else if (EqualsIgnoreCase(opt, "getack")) {
      // Our primary asks where we are.
      if (client.is_master()) host_.SendAckToPrimary();
      return;
    } else if (EqualsIgnoreCase(opt, "rdma")) {
      // REPLCONF rdma <provider> <blob>: with rdma-resume, the options with two values.
      if (c.argc() != 4) {
        c.Error(cmd::OpStatus::kSyntax);
        return;
      }
      SetupDataLink(c, client, c.arg(2), c.arg(3));
      return;
    } else if (EqualsIgnoreCase(opt, "rdma-resume")) {
      // REPLCONF rdma-resume <provider> <blob>: rebuild a data link that failed mid-snapshot.
      if (c.argc() != 4) {
        c.Error(cmd::OpStatus::kSyntax);
        return;
      }
      ResumeDataLink(c, client, c.arg(3));
      return;
    } else if (EqualsIgnoreCase(opt, "capa")) {
      if (EqualsIgnoreCase(val, "eof")) announced_[client.id()].capa_eof = true;
    } else if (EqualsIgnoreCase(opt, "ip-address")) {
      // What INFO and ROLE show for the replica (a replica behind NAT names its outside address).
      if (AttachedReplica* r = Find(&client)) r->ip = std::string(val);
      announced_[client.id()].ip = std::string(val);
    } else if (EqualsIgnoreCase(opt, "rdb-only")) {
      auto v = ParseInt64(val);
      if (!v) {
        c.Error(cmd::OpStatus::kNotInteger);
        return;
      }
      if (*v < 0 || *v > 1) {
        c.Error("value is out of range, value must between 0 and 1");
        return;
      }
      announced_[client.id()].filter.rdb_only = *v == 1;
    } else if (EqualsIgnoreCase(opt, "rdb-filter-only")) {
      // What the snapshot includes: "" nothing, "functions" the function libraries only.
      auto words = SplitArgs(val);
      if (!words) {
        c.Error("Missing rdb-filter-only values");
        return;
      }
      SnapshotFilter& f = announced_[client.id()].filter;
      f.keys = f.functions = false;
      for (const std::string& w : *words) {
        if (!EqualsIgnoreCase(w, "functions")) {
          c.Error("Unsupported rdb-filter-only option: " + w);
          return;
        }
        f.functions = true;
      }
    } else {
      c.Error("Unrecognized REPLCONF option: " + std::string(opt));
      return;
    }
  }
  c.out.Ok();
}

Primary::AttachedReplica* Primary::Register(ClientConn& c) {
  auto r = std::make_unique<AttachedReplica>();
  r->client = &c;
  r->state = State::kWaitSnapshot;
  r->since_ms = WallMs();
  r->ack_ms = r->since_ms;
  std::string peer = c.peer();
  r->ip = peer.substr(0, peer.rfind(':'));
  if (auto it = announced_.find(c.id()); it != announced_.end()) {
    if (!it->second.ip.empty()) r->ip = it->second.ip;  // replica-announce-ip, as in Redis
    r->listening_port = it->second.port;
    r->capa_eof = it->second.capa_eof;
    r->filter = it->second.filter;
    r->data = std::move(it->second.data);
    announced_.erase(it);
  }
  c.MarkReplica();
  replicas_.push_back(std::move(r));
  if (!feed_.active()) {
    // The first replica creates the backlog and starts a new history, as Redis does.
    replid_ = RandomHex40();
    replid2_.assign(40, '0');
    second_offset_ = -1;
    feed_.CreateBacklog(static_cast<size_t>(host_.ConfigInt("repl-backlog-size")), feed_.offset());
  }
  return replicas_.back().get();
}

bool Primary::TryPartial(cmd::Context& c, ClientConn& client, std::string_view replid,
                         int64_t offset) {
  if (!feed_.active()) return false;
  bool ours = replid == replid_ || (replid == replid2_ && offset <= second_offset_);
  // PSYNC names the next byte it wants (1-based), i.e. processed bytes + 1.
  Backlog* backlog = feed_.backlog();
  if (!ours || !backlog->Covers(offset - 1)) return false;
  AttachedReplica* r = Register(client);
  r->state = State::kOnline;
  c.out.Simple("CONTINUE " + replid_);
  size_t sending = static_cast<size_t>(backlog->end_offset() - (offset - 1));
  if (r->data) {
    std::string data;
    backlog->CopySince(offset - 1, &data);
    if (!data.empty()) SendTo(*r, data);
  } else {
    client.StartStream(backlog->CursorAt(offset - 1));  // from the shared buffer, no copy
  }
  LOG_NOTICE(
      "Partial resynchronization request from %s accepted. Sending %zu bytes of backlog "
      "starting from offset %lld.",
      client.peer().c_str(), sending, static_cast<long long>(offset));
  return true;
}

void Primary::Psync(cmd::Context& c, ClientConn& client) {
  // Already a replica, or a MONITOR client (a replica to Redis as well): ignored, as in Redis.
  if (Find(&client) || client.is_monitor()) return;
  if (client.in_multi()) {
    c.Error("Replica can't be in MULTI");  // not reached: PSYNC is no-multi
    return;
  }
  if (host_.IsReplica() && !host_.PrimaryLinkUp()) {
    c.Error("-NOMASTERLINK Can't SYNC while not connected with my master");
    return;
  }
  // As in Redis: the stream starts on a connection with nothing else left to send (the
  // snapshot's reply is written to the socket directly).
  if (client.HasPendingOutput()) {
    c.Error("SYNC and PSYNC are invalid with pending output");
    return;
  }
  bool psync = EqualsIgnoreCase(c.arg(0), "psync");
  if (psync && c.argc() >= 3) {  // a fourth argument (FAILOVER) is the server's
    auto offset = ParseInt64(c.arg(2));
    if (!offset) {
      LOG_WARNING("Replica %s asks for synchronization but with a wrong offset",
                  client.peer().c_str());
      c.Error(cmd::OpStatus::kNotInteger);
      return;
    }
    if (TryPartial(c, client, c.arg(1), *offset)) {
      sync_stats_.partial_ok++;
      return;
    }
    if (!c.arg(1).starts_with("?")) sync_stats_.partial_err++;  // as Redis: not for "PSYNC ?"
  }
  sync_stats_.full++;
  LOG_NOTICE("Replica %s asks for synchronization", client.peer().c_str());
  LOG_NOTICE("Full resync requested by replica %s", client.peer().c_str());
  // SYNC (redis-cli --replica, old replicas) gets the snapshot payload alone, as from Redis.
  Register(client)->pre_psync = !psync;
  // repl-disable-tcp-nodelay: fewer, bigger packets to the replica for some latency, set as
  // Redis does when a replica starts a full sync (a partial one keeps its connection as is).
  if (host_.ConfigBool("repl-disable-tcp-nodelay")) net::SetNoDelay(client.fd(), false);
  // The reply (+FULLRESYNC) is written when the snapshot starts. As in Redis, that is now
  // unless a diskless sync waits repl-diskless-sync-delay for more replicas or a child runs;
  // Cron starts it then.
  // The last sync's child may have ended before its exit was handled: a sync right behind
  // another need not wait for that.
  OnChildExit(WallMs());
}

// Redis' freeClient: a disk-based snapshot that no replica waits for any more is of no use
// unless the user keeps snapshots (save points), and a new sync can fork sooner without it.
void Primary::KillSnapshotIfUseless() {
  if (child_pid_ <= 0 || child_file_.empty() || !host_.ConfigString("save").empty()) return;
  for (const auto& r : replicas_) {
    if (r->state == State::kSendingSnapshot && !r->file_on_link) return;
  }
  LOG_NOTICE("Killing the replication snapshot child (pid %d): no replica waits for it",
             static_cast<int>(child_pid_));
  kill(child_pid_, SIGUSR1);
}

void Primary::ReapChildIfDone() {
  if (child_pid_ <= 0) return;
  int status = 0;
  if (waitpid(child_pid_, &status, WNOHANG) == child_pid_) {
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    // A disk-based snapshot that did not finish leaves its temporary file (Redis'
    // rdbRemoveTempFile).
    if (!ok && !child_file_.empty()) {
      unlink(("temp-" + std::to_string(child_pid_) + ".rdb").c_str());
    }
    child_pid_ = -1;
    host_.child_info().EndChild();
    SnapshotDone(ok);
  }
}

void Primary::OnChildExit(int64_t now_ms) {
  ReapChildIfDone();
  if (child_pid_ < 0) StartSnapshot(now_ms);
}

// Redis' removeRDBUsedToSyncReplicas: with rdb-del-sync-files and no persistence (no save
// points, no AOF), the file a disk-based sync saved goes once no replica waits for or reads it.
void Primary::RemoveSyncFileIfUnused() {
  if (!host_.ConfigBool("rdb-del-sync-files")) {
    sync_file_to_delete_.clear();
    return;
  }
  if (sync_file_to_delete_.empty() || !host_.ConfigString("save").empty() ||
      host_.ConfigBool("appendonly")) {
    return;
  }
  for (const auto& r : replicas_) {
    if (r->state != State::kOnline || r->file_on_link) return;
  }
  struct stat sb;
  if (lstat(sync_file_to_delete_.c_str(), &sb) != 0) return;
  LOG_NOTICE("Removing the RDB file used to feed replicas in a persistence-less instance");
  unlink(sync_file_to_delete_.c_str());
  sync_file_to_delete_.clear();
}

void Primary::Cron(int64_t now_ms) {
  // Blocks the replicas are done with (they moved on, or went) leave the shared buffer.
  if (Backlog* b = feed_.backlog()) {
    UpdateNeededFrom();
    b->Trim();
  }
  OnChildExit(now_ms);
  RemoveSyncFileIfUnused();
  // A replica that stopped acknowledging for repl-timeout is cut off (it will resync).
  int64_t timeout_ms = host_.ConfigInt("repl-timeout") * 1000;
  for (auto& r : replicas_) {
    if (r->file_on_link && r->data && r->data->SnapshotFileDelivered()) PutOnline(*r);
    if (r->state == State::kOnline && now_ms - r->ack_ms > timeout_ms) {
      LOG_WARNING("Disconnecting timedout replica: %s", r->client->peer().c_str());
      r->client->RequestClose();
      r->ack_ms = now_ms;  // once
    }
  }
  if (!waiters_.empty()) ServeWaiters(now_ms);
  // Replicas whose snapshot has not started (another child runs) hear a newline once a second,
  // as from Redis: their repl-timeout counts from the last byte they read. Nothing else is
  // written to them before +FULLRESYNC, so the newline cannot land inside a reply.
  if (now_ms - last_keepalive_ms_ >= 1000) {
    last_keepalive_ms_ = now_ms;
    for (auto& r : replicas_) {
      if (r->state != State::kWaitSnapshot) continue;
      if (r->client->tls()) {
        r->client->Send("\n");
      } else {
        SendKeepalive(r->client->fd());
      }
    }
  }
  // repl-backlog-ttl: a primary without replicas for that long frees its backlog (and starts a
  // new history), as Redis does. A replica keeps its backlog (its own replicas may come back).
  int64_t ttl_s = host_.ConfigInt("repl-backlog-ttl");
  if (!replicas_.empty() || !feed_.active() || host_.IsReplica()) {
    no_replicas_since_ms_ = 0;
  } else if (no_replicas_since_ms_ == 0) {
    no_replicas_since_ms_ = now_ms;
  } else if (ttl_s > 0 && now_ms - no_replicas_since_ms_ > ttl_s * 1000) {
    LOG_NOTICE("Replication backlog freed after %lld seconds without connected replicas.",
               static_cast<long long>(ttl_s));
    feed_.FreeBacklog();
    replid_ = RandomHex40();
    replid2_.assign(40, '0');
    second_offset_ = -1;
    no_replicas_since_ms_ = 0;
  }
  // A failed data link ends the connection; the replica comes back with PSYNC and resumes.
  // One that failed mid-snapshot gets a few seconds for the replica to rebuild it.
  for (auto& r : replicas_) {
    // A link that failed because its snapshot child did is left to SnapshotDone, which hears
    // of the child's exit next and says why (Redis' "SYNC failed" line).
    if (r->data && r->state == State::kSendingSnapshot && child_running() &&
        r->data->RingFinished()) {
      continue;
    }
    if (r->data && r->data->failed() && !r->data->Resumable(kDataLinkResumeGraceMs)) {
      LOG_WARNING(
          "Data link to replica %s failed (%s); closing the connection, it will resume "
          "with PSYNC",
          r->client->peer().c_str(), r->data->error().c_str());
      r->client->RequestClose();
      DropDataLink(std::move(r->data));
    }
  }
  int64_t period_ms = host_.ConfigInt("repl-ping-replica-period") * 1000;
  // A replica passes its primary's PINGs on instead of making its own.
  // As Redis: every period counted from the start, not at once for a new replica (whose stream
  // then starts with the first write).
  if (last_ping_ms_ == 0) last_ping_ms_ = now_ms;
  if (!replicas_.empty() && now_ms - last_ping_ms_ >= period_ms && !host_.IsReplica()) {
    last_ping_ms_ = now_ms;
    std::string_view ping[] = {"PING"};
    feed_.EmitRaw(ping);
  }
}

int64_t Primary::CountAcked(int64_t offset) const {
  int64_t n = 0;
  for (const auto& r : replicas_) n += r->state == State::kOnline && r->ack_offset >= offset;
  return n;
}

// Online replicas that acknowledged within min-replicas-max-lag (Redis' repl_good_slaves_count).
int64_t Primary::GoodReplicas(int64_t now_ms) const {
  int64_t max_lag_ms = host_.ConfigInt("min-replicas-max-lag") * 1000;
  int64_t good = 0;
  for (const auto& r : replicas_) {
    good += r->state == State::kOnline && now_ms - r->ack_ms <= max_lag_ms;
  }
  return good;
}

bool Primary::EnoughGoodReplicas(int64_t now_ms) const {
  int64_t need = host_.ConfigInt("min-replicas-to-write");
  return need <= 0 || GoodReplicas(now_ms) >= need;
}

void Primary::Wait(cmd::Context& c, ClientConn& client) {
  if (host_.IsReplica()) {
    c.Error(
        "WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to "
        "replicas are just local and are not propagated.");
    return;
  }
  int64_t numreplicas, timeout;
  if (!c.ParseInt(c.arg(1), &numreplicas) || !c.ParseInt(c.arg(2), &timeout)) return;
  if (timeout < 0) {
    c.Error("timeout is negative");
    return;
  }
  int64_t offset = client.write_offset();
  int64_t acked = CountAcked(offset);
  if (acked >= numreplicas || c.session.deny_blocking) {
    c.out.Int(acked);
    return;
  }
  waiters_.push_back({&client, offset, numreplicas, timeout > 0 ? c.now_ms + timeout : 0});
  c.block = cmd::BlockRequest{};  // parked with no keys; ServeWaiters answers it
  RequestAcks();                  // where is every replica now
}

void Primary::SendRequestedAcks(bool writes_paused) {
  if (!acks_requested_ || writes_paused) return;
  acks_requested_ = false;
  SendGetack();
}

void Primary::SendGetack() {
  // The request travels in the stream, as in Redis.
  std::string_view getack[] = {"REPLCONF", "GETACK", "*"};
  feed_.EmitRaw(getack);
}

std::vector<Primary::ReplicaStatus> Primary::ReplicaStatuses() const {
  std::vector<ReplicaStatus> out;
  for (const auto& r : replicas_) {
    out.push_back({r->ip, r->listening_port, r->state == State::kOnline, r->ack_offset, r->ack_ms,
                   StateName(*r)});
  }
  return out;
}

std::optional<int64_t> Primary::CancelWait(ClientConn* client) {
  auto it = std::find_if(waiters_.begin(), waiters_.end(),
                         [&](const Waiter& w) { return w.client == client; });
  if (it == waiters_.end()) return std::nullopt;
  int64_t acked = CountAcked(it->offset);
  waiters_.erase(it);
  return acked;
}

void Primary::ServeWaiters(int64_t now_ms) {
  std::vector<std::pair<ClientConn*, int64_t>> done;
  std::erase_if(waiters_, [&](const Waiter& w) {
    int64_t acked = CountAcked(w.offset);
    if (acked < w.replicas && (w.deadline_ms == 0 || now_ms < w.deadline_ms)) return false;
    done.emplace_back(w.client, acked);
    return true;
  });
  for (auto [client, acked] : done) client->AnswerWait(acked);
}

// Redis' names: wait_bgsave until the snapshot is made (a diskless one is made as it is sent,
// so all along), send_bulk while a saved file goes to the replica, then online.
const char* Primary::StateName(const AttachedReplica& r) const {
  if (r.state == State::kOnline) return "online";
  if (r.state == State::kWaitSnapshot) return "wait_bgsave";
  bool saved = !child_file_.empty() && child_report_ && child_report_->bytes()[0] == 1;
  return r.file_on_link || saved ? "send_bulk" : "wait_bgsave";
}

void Primary::AppendInfo(std::string* out, int64_t now_ms, bool role) const {
  char buf[512];
  if (role) out->append("role:master\r\n");
  snprintf(buf, sizeof(buf), "connected_slaves:%zu\r\n", replicas_.size());
  out->append(buf);
  // As Redis, while min-replicas-to-write is in force.
  if (host_.ConfigInt("min-replicas-to-write") > 0 && host_.ConfigInt("min-replicas-max-lag") > 0) {
    snprintf(buf, sizeof(buf), "min_slaves_good_slaves:%lld\r\n",
             static_cast<long long>(GoodReplicas(now_ms)));
    out->append(buf);
  }
  for (size_t i = 0; i < replicas_.size(); i++) {
    const AttachedReplica& r = *replicas_[i];
    snprintf(buf, sizeof(buf), "slave%zu:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld", i,
             r.ip.c_str(), r.listening_port, StateName(r), static_cast<long long>(r.ack_offset),
             static_cast<long long>((now_ms - r.ack_ms) / 1000));
    out->append(buf);
    // kvstore's own: the transport of the link (extra key=value pairs, as Redis adds them).
    out->append(r.data ? ",transport=rdma," + r.data->Describe() + "\r\n" : ",transport=tcp\r\n");
  }
  const Backlog* b = const_cast<Feed&>(feed_).backlog();
  snprintf(buf, sizeof(buf),
           "master_failover_state:%s\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
           "master_repl_offset:%lld\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
           "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%lld\r\n"
           "repl_backlog_histlen:%zu\r\n",
           failover_state_, replid_.c_str(), replid2_.c_str(),
           static_cast<long long>(feed_.offset()), static_cast<long long>(second_offset_),
           b ? 1 : 0, static_cast<long long>(host_.ConfigInt("repl-backlog-size")),
           static_cast<long long>(b ? b->first_byte_offset() : 0), b ? b->histlen() : 0);
  out->append(buf);
}

size_t Primary::OwnOutput() const {
  size_t own = 0;
  for (const auto& r : replicas_) own += r->client->output_pending() + DataLinkBuffers(*r);
  return own;
}

size_t Primary::DataLinkBuffers(const AttachedReplica& r) const {
  if (!r.data) return 0;
  size_t batch = r.data_batch.capacity();
  if (batch <= std::string().capacity()) batch = 0;  // the string's inline bytes: no allocation
  return batch + r.data->Unsent();
}

Primary::Memory Primary::ReplicationMemory() const {
  Memory m;
  const Backlog* b = const_cast<Feed&>(feed_).backlog();
  size_t own = OwnOutput();
  // The shared buffer and the data links' copies of the stream; not the replies a replica's
  // connection holds before its stream (+FULLRESYNC and the like), which Redis leaves out too.
  m.total_buffers = b ? b->memory() : 0;
  for (const auto& r : replicas_) m.total_buffers += DataLinkBuffers(*r);
  size_t size = static_cast<size_t>(host_.ConfigInt("repl-backlog-size"));
  if (!replicas_.empty() && b && b->memory() > size) {
    m.backlog = size;
    m.replicas = b->memory() - size + own;
  } else {
    m.backlog = b ? b->memory() : 0;
    m.replicas = own;
  }
  return m;
}

size_t Primary::OutputBytes() const {
  const Backlog* b = const_cast<Feed&>(feed_).backlog();
  // Not ReplicationMemory().replicas: the shared buffer's part past the backlog's size stays
  // uncounted after the replicas that made it grow went, until it is trimmed (Redis' rule).
  return (b ? b->MemoryPastCapacity() : 0) + OwnOutput();
}

}  // namespace kv::repl
