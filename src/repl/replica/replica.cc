#include "repl/replica/replica.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "net/socket.h"
#include "persist/snapshot.h"
#include "repl/datalink/data_link.h"
#include "repl/datalink/link_io.h"
#include "repl/primary/primary.h"

namespace kv::repl {
namespace {

constexpr int kConnectTimeoutMs = 5000;
constexpr int kRetryMs = 1000;  // Redis retries the connection every second (replicationCron)

const char* StateName(Replica::State s) {
  switch (s) {
    case Replica::State::kNone:
      return "none";
    case Replica::State::kConnect:
      return "connect";
    case Replica::State::kConnecting:
      return "connecting";
    case Replica::State::kHandshake:
      return "handshake";
    case Replica::State::kTransfer:
      return "sync";
    case Replica::State::kConnected:
      return "connected";
  }
  return "none";
}

}  // namespace

Replica::Replica(Host& server, Primary& primary) : server_(server), primary_(primary) {
  thread_ = std::thread([this] { ThreadMain(); });
}

Replica::~Replica() { Stop(); }

void Replica::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  generation_++;
  if (int fd = link_fd_.load(); fd >= 0) shutdown(fd, SHUT_RDWR);
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Replica::SetState(State s) {
  if (state_ != s) LOG_VERBOSE("Replica link state: %s -> %s", StateName(state_), StateName(s));
  state_ = s;
}

void Replica::Follow(const std::string& host, int port) {
  host_ = host;
  port_ = port;
  fell_back_ = false;
  data_failures_ = 0;
  master_id_ = 0;
  SetState(State::kConnect);
  link_down_since_ms_ = WallMs();
  server_.keyspace().set_expire_deletes(false);  // the primary's DELs expire keys here
  // Our own replicas stay, as in Redis 7.0: they are let go when a snapshot of the new primary
  // is about to replace our data, or when a partial resync changes our history; a switch that
  // comes to nothing (back to the old primary, which resyncs us partially) costs them nothing.
  // CONFIG GET replicaof and CONFIG REWRITE (which Sentinel runs after a failover) show the
  // primary followed now, as in Redis.
  server_.SetConfigInternal("replicaof", host + " " + std::to_string(port));
  SetLogRole('S');
  LOG_NOTICE("Connecting to MASTER %s:%d", host.c_str(), port);
  {
    std::lock_guard lock(mu_);
    target_ = {host, port, ++generation_};
    wake_ = true;
  }
  if (int fd = link_fd_.load(); fd >= 0) shutdown(fd, SHUT_RDWR);
  cv_.notify_all();
}

void Replica::FollowForFailover(const std::string& host, int port, std::function<void(bool)> done) {
  Follow(host, port);
  failover_done_ = std::move(done);
}

void Replica::Unfollow() {
  if (!is_replica()) return;
  StopFollowing();
  primary_.Promote();
}

void Replica::StopFollowing() {
  failover_done_ = nullptr;
  generation_++;
  master_epoch_++;
  if (int fd = link_fd_.load(); fd >= 0) shutdown(fd, SHUT_RDWR);
  if (master_id_) {
    // The cached master keeps the stream's db, as Redis' does: a partial resync (with this
    // primary again, after a detour) continues the stream without a SELECT.
    master_db_ = stream_db();
    server_.CloseClient(master_id_);
  }
  master_id_ = 0;
  host_.clear();
  port_ = 0;
  server_.SetConfigInternal("replicaof", "");
  SetLogRole('M');
  SetState(State::kNone);
  server_.keyspace().set_expire_deletes(true);
}

void Replica::ReplicaOf(cmd::Context& c) {
  if (EqualsIgnoreCase(c.arg(1), "no") && EqualsIgnoreCase(c.arg(2), "one")) {
    if (is_replica()) {
      LOG_NOTICE("MASTER MODE enabled (user request from '%s')",
                 server_.CurrentClientPeer().c_str());
      StopFollowing();
      primary_.Promote();
    }
    c.out.Ok();
    return;
  }
  int64_t port;
  if (!c.ParseInt(c.arg(2), &port)) return;
  if (port < 0 || port > 65535) {
    c.Error("Invalid master port");
    return;
  }
  std::string host(c.arg(1));
  if (is_replica() && host == host_ && port == port_) {
    c.out.Simple("OK Already connected to specified master");
    return;
  }
  if (is_replica()) StopFollowing();
  Follow(host, static_cast<int>(port));
  c.out.Ok();
}

void Replica::ThreadMain() {
  Target last_failed;
  while (true) {
    Target t;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || wake_; });
      if (stop_) return;
      wake_ = false;
      t = target_;
    }
    Status st = Attempt(t);
    if (st.ok() || Cancelled(t)) continue;
    LOG_WARNING("Replication link to %s:%d failed: %s", t.host.c_str(), t.port,
                st.message().c_str());
    {
      std::lock_guard lock(server_.mu());
      if (!Cancelled(t)) SetState(State::kConnect);
    }
    // Try again after a pause, unless told otherwise meanwhile.
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(kRetryMs), [&] { return stop_ || wake_; });
    if (!stop_ && !wake_ && target_.generation == t.generation) wake_ = true;
  }
}

Status Replica::Attempt(const Target& t) {
  {
    std::lock_guard lock(server_.mu());
    if (Cancelled(t)) return Status::Ok();
    SetState(State::kConnecting);
  }
  // bind-source-addr: the local address the primary sees this replica come from.
  auto fd_r =
      net::ConnectTcp(t.host, t.port, kConnectTimeoutMs, server_.ConfigString("bind-source-addr"));
  if (!fd_r.ok()) return fd_r.status();
  net::Fd fd = std::move(*fd_r);
  if (int64_t ka = server_.tcp_keepalive_s(); ka > 0) {
    net::SetKeepAlive(fd.get(), static_cast<int>(ka));
  }
  link_fd_ = fd.get();
  struct Clear {
    std::atomic<int>& f;
    std::unique_ptr<net::TlsConn>& tls;
    ~Clear() {
      f = -1;
      tls.reset();  // unless the master client took it
    }
  } clear{link_fd_, link_tls_};
  if (Cancelled(t)) return Status::Ok();
  if (server_.ConfigBool("tls-replication")) KV_TRY(StartTls(fd.get()));
  LOG_NOTICE("MASTER <-> REPLICA sync started");
  std::string reply;
  if (Status hs = Handshake(fd.get(), t, &reply); !hs.ok()) {
    // Redis' line for a primary that stops answering during the handshake (repl-timeout).
    if (hs.code() == Code::kTimedOut) LOG_WARNING("Timeout connecting to the MASTER...");
    return hs;
  }
  std::string leftover;
  if (reply.rfind("+CONTINUE", 0) == 0) {
    uint64_t id;
    {
      std::lock_guard lock(server_.mu());
      if (Cancelled(t)) return Status::Ok();
      std::string newid = reply.size() > 10 ? reply.substr(10) : "";
      if (!newid.empty() && newid != primary_.replid()) {
        LOG_NOTICE("Master replication ID changed to %s", newid.c_str());
        primary_.ContinueWith(newid);
      }
      LOG_NOTICE("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization%s.",
                 data_ ? " (stream over the RDMA data link)" : "");
      if (data_) data_resumes_++;
      // The backlog may have arrived with the reply.
      AdoptMaster(fd.Release(), std::move(link_pending_), master_db_);
      id = master_id_;
    }
    if (data_) PumpDataLink(t, id, "");
    return Status::Ok();
  }
  if (reply.rfind("+FULLRESYNC ", 0) != 0) {
    return Status::Corruption("unexpected reply to PSYNC: " + reply.substr(0, 100));
  }
  auto words = SplitArgs(reply.substr(1)).value_or(std::vector<std::string>{});
  if (words.size() != 3 || words[1].size() != 40 || !ParseInt64(words[2])) {
    return Status::Corruption("malformed +FULLRESYNC reply: " + reply.substr(0, 100));
  }
  LOG_NOTICE("Full resync from master: %s:%s", words[1].c_str(), words[2].c_str());
  {
    std::lock_guard lock(server_.mu());
    if (Cancelled(t)) return Status::Ok();
    SetState(State::kTransfer);
  }
  if (data_) {
    Status st = LoadFromDataLink(t, fd.get(), words[1], *ParseInt64(words[2]));
    if (st.ok() && !Cancelled(t)) (void)fd.Release();  // now the master client's
    return st;
  }
  if (DisklessLoad()) {
    Status st = ReceiveAndLoad(fd.get(), t, words[1], *ParseInt64(words[2]));
    if (st.ok() && !Cancelled(t)) (void)fd.Release();  // now the master client's
    return st;
  }
  std::string path;
  Status st = ReceiveSnapshot(fd.get(), t, &leftover, &path);
  if (!st.ok()) {
    if (!path.empty()) unlink(path.c_str());
    return st;
  }
  std::lock_guard lock(server_.mu());
  if (Cancelled(t)) {
    unlink(path.c_str());
    return Status::Ok();
  }
  KV_TRY(LoadSnapshot(fd.get(), path, words[1], *ParseInt64(words[2])));
  AdoptMaster(fd.Release(), std::move(leftover), 0);
  return Status::Ok();
}

Status Replica::StartTls(int fd) {
  std::shared_ptr<net::TlsContext> ctx = server_.TlsContext();
  if (!ctx) return Status::Invalid("tls-replication is on but TLS is not configured");
  link_tls_ = net::TlsConn::Connect(std::move(ctx), fd);
  if (!link_tls_) return Status::IoError("cannot start a TLS session");
  int64_t timeout_ms = server_.ConfigInt("repl-timeout") * 1000;
  Status st = link_tls_->HandshakeUntil(MonoMs() + timeout_ms);
  // Redis' words for a connection to the primary that failed.
  if (!st.ok()) LOG_WARNING("Error condition on socket for SYNC: %s", st.message().c_str());
  return st;
}

Status Replica::Handshake(int fd, const Target& t, std::string* reply) {
  {
    std::lock_guard lock(server_.mu());
    if (Cancelled(t)) return Status::Closed("cancelled");
    SetState(State::kHandshake);
  }
  int timeout_ms = static_cast<int>(server_.ConfigInt("repl-timeout") * 1000);
  repl::LinkIo io(fd, timeout_ms, link_tls_.get());
  auto expect_ok = [&](const std::string& what, bool allow_noauth) -> Status {
    KV_TRY_ASSIGN(line, io.ReadLine());
    if (line.rfind("-NOAUTH", 0) == 0 && allow_noauth) return Status::Ok();
    if (!line.empty() && line[0] == '-') return Status::Invalid(what + ": " + line);
    return Status::Ok();
  };
  KV_TRY(io.WriteAll(repl::ReplCommand({"PING"})));
  KV_TRY(expect_ok("PING", true));
  std::string user = server_.ConfigString("masteruser");
  std::string pass = server_.ConfigString("masterauth");
  if (!pass.empty()) {
    KV_TRY(io.WriteAll(user.empty() ? repl::ReplCommand({"AUTH", pass})
                                    : repl::ReplCommand({"AUTH", user, pass})));
    KV_TRY_ASSIGN(line, io.ReadLine());
    if (!line.empty() && line[0] == '-') {
      LOG_WARNING("Unable to AUTH to MASTER: %s", line.c_str());  // Redis' words
      return Status::Invalid("AUTH: " + line);
    }
  }
  // The address the primary lists us under (INFO, ROLE, and so Sentinel): replica-announce-port
  // and replica-announce-ip where set (port forwarding, NAT), else our port (tls-port when we
  // replicate over TLS, as Redis) and the address our connection comes from.
  std::string port = std::to_string(server_.port()), announce_ip;
  {
    std::lock_guard lock(server_.mu());
    if (int64_t p = server_.ConfigInt("replica-announce-port"); p > 0) {
      port = std::to_string(p);
    } else if (int64_t tls = server_.ConfigInt("tls-port");
               tls > 0 && server_.ConfigBool("tls-replication")) {
      port = std::to_string(tls);
    }
    announce_ip = server_.ConfigString("replica-announce-ip");
  }
  KV_TRY(io.WriteAll(repl::ReplCommand({"REPLCONF", "listening-port", port})));
  KV_TRY(expect_ok("REPLCONF listening-port", false));
  if (!announce_ip.empty()) {
    KV_TRY(io.WriteAll(repl::ReplCommand({"REPLCONF", "ip-address", announce_ip})));
    (void)expect_ok("REPLCONF ip-address", false);  // non-critical, as in Redis
  }
  bool rdma = UseDataLink();
  if (rdma) {
    KV_TRY(io.WriteAll(
        repl::ReplCommand({"REPLCONF", "capa", "eof", "capa", "psync2", "capa", "rdma"})));
  } else {
    KV_TRY(io.WriteAll(repl::ReplCommand({"REPLCONF", "capa", "eof", "capa", "psync2"})));
  }
  (void)expect_ok("REPLCONF capa", false);  // a primary without it still syncs
  data_.reset();
  if (rdma) {
    auto set_up = SetupDataLink(io, t);
    if (!set_up.ok()) {
      DataLinkFailed(set_up.status().message());
      return set_up.status();
    }
  }
  std::string replid = "?", offset = "-1";
  bool failover;
  {
    std::lock_guard lock(server_.mu());
    // A known history (ours, or the last primary's) asks for a partial resync.
    if (primary_.feed().active()) {
      replid = primary_.replid();
      offset = std::to_string(primary_.feed().offset() + 1);
    }
    failover = failover_done_ != nullptr;
  }
  // FAILOVER's PSYNC asks the replica it goes to to become the primary.
  KV_TRY(io.WriteAll(failover ? repl::ReplCommand({"PSYNC", replid, offset, "FAILOVER"})
                              : repl::ReplCommand({"PSYNC", replid, offset})));
  std::string line;
  do {
    KV_TRY_ASSIGN(got, io.ReadLine());
    line = std::move(got);
  } while (line.empty());  // keepalive newlines
  if (failover) {
    std::lock_guard lock(server_.mu());
    if (!Cancelled(t) && failover_done_) {
      auto done = std::move(failover_done_);
      failover_done_ = nullptr;
      done(line.rfind("+CONTINUE", 0) == 0 || line.rfind("+FULLRESYNC", 0) == 0);
    }
  }
  if (line[0] == '-') return Status::Invalid("PSYNC refused: " + line);
  *reply = line;
  // Bytes already read past the reply belong to what follows (payload or stream).
  link_pending_ = std::move(io.pending());
  return Status::Ok();
}

int Replica::stream_db() const {
  if (master_id_) {
    if (int db = server_.ClientDb(master_id_); db >= 0) return db;
  }
  return master_db_;
}

void Replica::AdoptMaster(int fd, std::string leftover, int db) {
  // Keyspace lock held. The first ACK goes at once: a primary that streamed the snapshot waits
  // for it to start the stream (the RDB's end mark must be the last thing read).
  std::string offset = std::to_string(primary_.feed().offset());
  master_id_ =
      server_.AdoptMaster(fd, std::move(link_tls_), repl::ReplCommand({"REPLCONF", "ACK", offset}),
                          std::move(leftover), db);
  last_ack_ms_ = WallMs();
  // Link thread, before the link shows as up: INFO must not see it up without its transport.
  data_up_ = data_ != nullptr;
  SetState(State::kConnected);
  last_io_ms_ = WallMs();
}

void Replica::OnMasterCommand(std::string_view raw) {
  last_io_ms_ = WallMs();
  primary_.ProxyStream(raw);
}

void Replica::OnClientClosed(uint64_t id, int db) {
  if (master_id_ == 0 || id != master_id_) return;
  master_id_ = 0;
  master_epoch_++;
  master_db_ = db;
  if (state_ == State::kNone) return;
  LOG_NOTICE("Connection with master lost. Caching the disconnected master state.");
  link_down_since_ms_ = WallMs();
  SetState(State::kConnect);
  {
    std::lock_guard lock(mu_);
    wake_ = true;
  }
  cv_.notify_all();
}

void Replica::SendAck() {
  if (!master_id_) return;
  std::string off = std::to_string(primary_.feed().offset());
  std::string ack = repl::ReplCommand({"REPLCONF", "ACK", off});
  server_.PushToClient(master_id_, ack);
}

void Replica::Cron(int64_t now_ms) {
  if (state_ != State::kConnected) return;
  // A primary that went silent for repl-timeout (it PINGs every repl-ping-replica-period).
  if (now_ms - last_io_ms_ > server_.ConfigInt("repl-timeout") * 1000) {
    LOG_WARNING("MASTER timeout: no data nor PING received...");
    server_.CloseClient(master_id_);
    last_io_ms_ = now_ms;
    return;
  }
  if (now_ms - last_ack_ms_ >= 1000) {
    last_ack_ms_ = now_ms;
    SendAck();
  }
}

void Replica::AppendInfo(std::string* out, int64_t now_ms) const {
  char buf[512];
  bool up = state_ == State::kConnected;
  int64_t offset = primary_.feed().offset();
  // Read is applied plus what the master client holds unapplied (CLIENT PAUSE WRITE).
  int64_t read = offset + (up ? static_cast<int64_t>(server_.PendingInput(master_id_)) : 0);
  snprintf(buf, sizeof(buf),
           "role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\nmaster_link_status:%s\r\n"
           "master_last_io_seconds_ago:%lld\r\nmaster_sync_in_progress:%d\r\n"
           "slave_read_repl_offset:%lld\r\nslave_repl_offset:%lld\r\n",
           host_.c_str(), port_, up ? "up" : "down",
           static_cast<long long>(up ? (now_ms - last_io_ms_) / 1000 : -1),
           state_ == State::kTransfer ? 1 : 0, static_cast<long long>(read),
           static_cast<long long>(offset));
  out->append(buf);
  if (state_ == State::kTransfer) {
    int64_t total = sync_total_, read = sync_read_;
    snprintf(buf, sizeof(buf),
             "master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:%lld\r\n"
             "master_sync_left_bytes:%lld\r\nmaster_sync_perc:%.2f\r\n"
             "master_sync_last_io_seconds_ago:%lld\r\n",
             static_cast<long long>(total), static_cast<long long>(read),
             static_cast<long long>(total >= 0 ? total - read : -1),
             total > 0 ? 100.0 * read / total : 0.0,
             static_cast<long long>((now_ms - sync_last_io_ms_) / 1000));
    out->append(buf);
  }
  if (!up) {
    snprintf(buf, sizeof(buf), "master_link_down_since_seconds:%lld\r\n",
             static_cast<long long>((now_ms - link_down_since_ms_) / 1000));
    out->append(buf);
  }
  // kvstore's own: the link's transport and its data plane.
  snprintf(buf, sizeof(buf),
           "master_link_transport:%s\r\nmaster_link_data_plane:%s\r\nrdma_bytes:%llu\r\n"
           "rdma_poll_mode:%s\r\nrdma_link_errors:%llu\r\nrdma_resumes:%llu\r\n"
           "rdma_fallbacks:%llu\r\n",
           data_up_ ? "rdma" : "tcp", data_up_ ? data_describe_.c_str() : "none",
           static_cast<unsigned long long>(data_bytes_.load()),
           data_up_ ? data_poll_mode_.c_str() : "none",
           static_cast<unsigned long long>(data_errors_),
           static_cast<unsigned long long>(data_resumes_),
           static_cast<unsigned long long>(data_fallbacks_));
  out->append(buf);
  // replica_announced (replica-announced): Sentinel leaves a replica that says 0 out of its
  // answers (SENTINEL REPLICAS), though it still monitors it.
  snprintf(buf, sizeof(buf),
           "slave_priority:%lld\r\nslave_read_only:%d\r\nreplica_announced:%d\r\n",
           static_cast<long long>(server_.ConfigInt("replica-priority")),
           server_.ConfigBool("replica-read-only") ? 1 : 0,
           server_.ConfigBool("replica-announced") ? 1 : 0);
  out->append(buf);
}

void Replica::Role(cmd::Context& c) const {
  c.out.Array(5);
  c.out.Bulk("slave");
  c.out.Bulk(host_);
  c.out.Int(port_);
  c.out.Bulk(StateName(state_));
  c.out.Int(primary_.feed().offset());
}

}  // namespace kv::repl
