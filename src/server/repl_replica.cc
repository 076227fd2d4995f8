#include "server/repl_replica.h"

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
#include "server/aof.h"
#include "server/client.h"
#include "server/poll_group.h"
#include "repl/datalink/data_link.h"
#include "repl/datalink/link_io.h"
#include "server/repl_primary.h"
#include "server/server.h"

namespace kv::server {
namespace {

constexpr int kConnectTimeoutMs = 5000;
constexpr int kRetryMs = 1000;  // Redis retries the connection every second (replicationCron)

const char* StateName(ReplReplica::State s) {
  switch (s) {
    case ReplReplica::State::kNone: return "none";
    case ReplReplica::State::kConnect: return "connect";
    case ReplReplica::State::kConnecting: return "connecting";
    case ReplReplica::State::kHandshake: return "handshake";
    case ReplReplica::State::kTransfer: return "sync";
    case ReplReplica::State::kConnected: return "connected";
  }
  return "none";
}

}  // namespace


ReplReplica::ReplReplica(Server& server) : server_(server) {
  thread_ = std::thread([this] { ThreadMain(); });
}

ReplReplica::~ReplReplica() { Stop(); }

void ReplReplica::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  generation_++;
  if (int fd = link_fd_.load(); fd >= 0) shutdown(fd, SHUT_RDWR);
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReplReplica::SetState(State s) {
  if (state_ != s) LOG_VERBOSE("Replica link state: %s -> %s", StateName(state_), StateName(s));
  state_ = s;
}

void ReplReplica::Follow(const std::string& host, int port) {
  host_ = host;
  port_ = port;
  fell_back_ = false;
  data_failures_ = 0;
  master_id_ = 0;
  SetState(State::kConnect);
  link_down_since_ms_ = WallMs();
  server_.keyspace().set_expire_deletes(false);  // the primary's DELs expire keys here
  server_.primary().DisconnectReplicas();        // they follow our new history
  // CONFIG GET replicaof and CONFIG REWRITE (which Sentinel runs after a failover) show the
  // primary followed now, as in Redis.
  server_.config().SetInternal("replicaof", host + " " + std::to_string(port));
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

void ReplReplica::StopFollowing() {
  generation_++;
  master_epoch_++;
  if (int fd = link_fd_.load(); fd >= 0) shutdown(fd, SHUT_RDWR);
  if (master_id_) {
    for (auto& [id, c] : server_.clients()) {
      if (id == master_id_) c->RequestClose();
    }
  }
  master_id_ = 0;
  host_.clear();
  port_ = 0;
  server_.config().SetInternal("replicaof", "");
  SetLogRole('M');
  SetState(State::kNone);
  server_.keyspace().set_expire_deletes(true);
}

void ReplReplica::ReplicaOf(cmd::Context& c) {
  if (EqualsIgnoreCase(c.arg(1), "no") && EqualsIgnoreCase(c.arg(2), "one")) {
    if (is_replica()) {
      LOG_NOTICE("MASTER MODE enabled (user request from '%s')",
                 server_.current_client().peer().c_str());
      StopFollowing();
      server_.primary().Promote();
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

void ReplReplica::ThreadMain() {
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

Status ReplReplica::Attempt(const Target& t) {
  {
    std::lock_guard lock(server_.mu());
    if (Cancelled(t)) return Status::Ok();
    SetState(State::kConnecting);
  }
  // bind-source-addr: the local address the primary sees this replica come from.
  auto fd_r = net::ConnectTcp(t.host, t.port, kConnectTimeoutMs,
                              server_.config().GetString("bind-source-addr"));
  if (!fd_r.ok()) return fd_r.status();
  net::Fd fd = std::move(*fd_r);
  if (int64_t ka = server_.tcp_keepalive_s(); ka > 0) {
    net::SetKeepAlive(fd.get(), static_cast<int>(ka));
  }
  link_fd_ = fd.get();
  struct Clear {
    std::atomic<int>& f;
    ~Clear() { f = -1; }
  } clear{link_fd_};
  if (Cancelled(t)) return Status::Ok();
  LOG_NOTICE("MASTER <-> REPLICA sync started");
  std::string reply;
  KV_TRY(Handshake(fd.get(), t, &reply));
  std::string leftover;
  if (reply.rfind("+CONTINUE", 0) == 0) {
    uint64_t id;
    {
      std::lock_guard lock(server_.mu());
      if (Cancelled(t)) return Status::Ok();
      std::string newid = reply.size() > 10 ? reply.substr(10) : "";
      if (!newid.empty() && newid != server_.primary().replid()) {
        server_.primary().ContinueWith(newid);
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

Status ReplReplica::Handshake(int fd, const Target& t, std::string* reply) {
  {
    std::lock_guard lock(server_.mu());
    if (Cancelled(t)) return Status::Closed("cancelled");
    SetState(State::kHandshake);
  }
  int timeout_ms = static_cast<int>(server_.config().GetInt("repl-timeout") * 1000);
  repl::LinkIo io(fd, timeout_ms);
  auto expect_ok = [&](const std::string& what, bool allow_noauth) -> Status {
    KV_TRY_ASSIGN(line, io.ReadLine());
    if (line.rfind("-NOAUTH", 0) == 0 && allow_noauth) return Status::Ok();
    if (!line.empty() && line[0] == '-') return Status::Invalid(what + ": " + line);
    return Status::Ok();
  };
  KV_TRY(io.WriteAll(repl::ReplCommand({"PING"})));
  KV_TRY(expect_ok("PING", true));
  std::string user = server_.config().GetString("masteruser");
  std::string pass = server_.config().GetString("masterauth");
  if (!pass.empty()) {
    KV_TRY(io.WriteAll(user.empty() ? repl::ReplCommand({"AUTH", pass})
                                    : repl::ReplCommand({"AUTH", user, pass})));
    KV_TRY(expect_ok("AUTH", false));
  }
  // The address the primary lists us under (INFO, ROLE, and so Sentinel): replica-announce-port
  // and replica-announce-ip where set (port forwarding, NAT), else our port and the address our
  // connection comes from.
  std::string port = std::to_string(server_.port()), announce_ip;
  {
    std::lock_guard lock(server_.mu());
    if (int64_t p = server_.config().GetInt("replica-announce-port"); p > 0) {
      port = std::to_string(p);
    }
    announce_ip = server_.config().GetString("replica-announce-ip");
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
  std::string replid, offset;
  {
    std::lock_guard lock(server_.mu());
    // A known history (ours, or the last primary's) asks for a partial resync.
    if (server_.primary().feed().active()) {
      replid = server_.primary().replid();
      offset = std::to_string(server_.primary().feed().offset() + 1);
    }
  }
  if (replid.empty()) {
    KV_TRY(io.WriteAll(repl::ReplCommand({"PSYNC", "?", "-1"})));
  } else {
    KV_TRY(io.WriteAll(repl::ReplCommand({"PSYNC", replid, offset})));
  }
  while (true) {
    KV_TRY_ASSIGN(line, io.ReadLine());
    if (line.empty()) continue;  // keepalive newlines
    if (line[0] == '-') return Status::Invalid("PSYNC refused: " + line);
    *reply = line;
    break;
  }
  // Bytes already read past the reply belong to what follows (payload or stream).
  link_pending_ = std::move(io.pending());
  return Status::Ok();
}

Status ReplReplica::ReceiveSnapshot(int fd, const Target& t, std::string* leftover,
                                    std::string* path) {
  int timeout_ms = static_cast<int>(server_.config().GetInt("repl-timeout") * 1000);
  repl::LinkIo io(fd, timeout_ms);
  io.pending() = std::move(link_pending_);
  std::string mark;
  int64_t total = -1;
  KV_TRY(repl::ReadSnapshotHeader(io, &total, &mark));
  *path = TempSnapshotPath();
  net::Fd out(::open(path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.valid()) return Status::FromErrno("open " + *path, errno);
  sync_total_ = total;
  sync_read_ = 0;
  LOG_NOTICE("MASTER <-> REPLICA sync: receiving %s from master to disk",
             total >= 0 ? repl::HumanMB(total).c_str() : "streamed snapshot");
  int64_t start = MonoMs(), last_log = start, written = 0;
  std::string buf = std::move(io.pending());
  std::string tail;  // $EOF: the last bytes kept back in case they begin the mark
  auto write_out = [&](const char* p, size_t n) -> Status {
    while (n > 0) {
      ssize_t w = ::write(out.get(), p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return Status::FromErrno("write " + *path, errno);
      p += w;
      n -= static_cast<size_t>(w);
      written += w;
    }
    return Status::Ok();
  };
  std::vector<char> chunk(1 << 20);
  while (true) {
    if (Cancelled(t)) return Status::Closed("cancelled");
    if (total >= 0) {
      size_t want = static_cast<size_t>(total - written);
      size_t take = std::min(want, buf.size());
      KV_TRY(write_out(buf.data(), take));
      buf.erase(0, take);
      if (written == total) {
        *leftover = std::move(buf);
        break;
      }
    } else {
      std::string window = tail + buf;
      size_t at = window.find(mark);
      if (at != std::string::npos) {
        KV_TRY(write_out(window.data(), at));
        *leftover = window.substr(at + mark.size());
        break;
      }
      size_t keep = std::min(window.size(), mark.size() - 1);
      KV_TRY(write_out(window.data(), window.size() - keep));
      tail = window.substr(window.size() - keep);
      buf.clear();
    }
    KV_TRY_ASSIGN(n, io.ReadSome(chunk.data(), chunk.size()));
    buf.append(chunk.data(), n);
    sync_read_ += static_cast<int64_t>(n);
    sync_last_io_ms_ = WallMs();
    int64_t now = MonoMs();
    if (now - last_log >= 1000) {
      last_log = now;
      double rate = static_cast<double>(sync_read_) / 1e6 / ((now - start) / 1000.0);
      if (total > 0) {
        LOG_NOTICE("MASTER <-> REPLICA sync: %s of %s (%.0f%%), %.1f MB/s, ETA %.0f s",
                   repl::HumanMB(sync_read_).c_str(), repl::HumanMB(total).c_str(),
                   100.0 * sync_read_ / total, rate,
                   rate > 0 ? (total - sync_read_) / 1e6 / rate : 0.0);
      } else {
        LOG_NOTICE("MASTER <-> REPLICA sync: %s received, %.1f MB/s",
                   repl::HumanMB(sync_read_).c_str(), rate);
      }
    }
  }
  if (::fsync(out.get()) != 0) return Status::FromErrno("fsync " + *path, errno);
  LOG_NOTICE("MASTER <-> REPLICA sync: %s received in %.3f s", repl::HumanMB(written).c_str(),
             (MonoMs() - start) / 1000.0);
  return Status::Ok();
}

// The snapshot as a loader Source, read from the link as the loader asks for bytes; counts
// progress. Views stay valid until the next Read.
class ReplReplica::SocketSource : public repl::BufferedSource {
 public:
  SocketSource(ReplReplica& owner, int fd, int timeout_ms, std::string pending, int64_t limit)
      : owner_(owner), io_(fd, timeout_ms), limit_(limit) {
    buf_ = std::move(pending);
  }

  Result<std::string_view> Read(size_t n) override {
    if (limit_ >= 0 && static_cast<int64_t>(offset() + n) > limit_) {
      return Status::Corruption("snapshot longer than the announced length");
    }
    return repl::BufferedSource::Read(n);
  }

 private:
  Status Fill(size_t missing) override {
    char chunk[1 << 16];
    size_t want = std::min(sizeof(chunk), std::max<size_t>(missing, 4096));
    KV_TRY_ASSIGN(got, io_.ReadSome(chunk, want));
    buf_.append(chunk, got);
    owner_.sync_read_ += static_cast<int64_t>(got);
    owner_.sync_last_io_ms_ = WallMs();
    return Status::Ok();
  }

  ReplReplica& owner_;
  repl::LinkIo io_;
  int64_t limit_;
};

bool ReplReplica::DisklessLoad() const {
  // repl-diskless-load: load straight from the link into a second dataset, swapped in at the
  // end (clients keep reading the old one meanwhile), or receive to disk first.
  std::lock_guard lock(server_.mu());
  std::string load = server_.config().GetString("repl-diskless-load");
  return load == "swapdb" || (load == "on-empty-db" && server_.keyspace().TotalKeys() == 0);
}

std::string ReplReplica::TempSnapshotPath() {
  return "temp-" + std::to_string(WallMs() / 1000) + "." + std::to_string(getpid()) + ".rdb";
}

persist::RdbLoadOptions ReplReplica::SyncLoadOptions(int fd, const char* done, const char* from,
                                                     int key_load_delay_us) {
  persist::RdbLoadOptions opts;
  opts.drop_expired = false;
  opts.now_ms = WallMs();
  opts.key_load_delay_us = key_load_delay_us;
  int64_t start = MonoMs();
  auto last_log = std::make_shared<int64_t>(start);
  auto last_newline = std::make_shared<int64_t>(0);
  opts.progress = [=](uint64_t off) {
    int64_t now = MonoMs();
    if (now - *last_newline >= 1000) {
      *last_newline = now;
      repl::SendKeepalive(fd);
    }
    if (now - *last_log < 1000) return;
    *last_log = now;
    LOG_NOTICE("MASTER <-> REPLICA sync: %s %s %s, %.1f MB/s", repl::HumanMB(off).c_str(), done,
               from, off / 1e6 / ((now - start) / 1000.0));
  };
  return opts;
}

int64_t ReplReplica::ConfigInt(const char* name) {
  std::lock_guard lock(server_.mu());
  return server_.config().GetInt(name);
}

Status ReplReplica::LoadSide(int fd, persist::Source& src, const char* from,
                             std::unique_ptr<store::Keyspace>* side, uint64_t* keys,
                             std::vector<std::string>* functions) {
  *side = std::make_unique<store::Keyspace>(server_.keyspace().num_dbs());
  (*side)->limits() = server_.keyspace().limits();
  (*side)->set_expire_deletes(false);
  persist::RdbLoadOptions opts =
      SyncLoadOptions(fd, "loaded", from, static_cast<int>(ConfigInt("key-load-delay")));
  persist::RdbLoadResult res;
  KV_TRY(persist::LoadRdb(src, **side, opts, &res));
  *keys = res.keys_loaded;
  *functions = std::move(res.functions);
  return Status::Ok();
}

Status ReplReplica::InstallSide(store::Keyspace& side, const std::vector<std::string>& functions,
                                const std::string& replid, int64_t offset) {
  KV_TRY(server_.InstallFunctions(functions));
  server_.keyspace().SwapData(side);
  server_.primary().SetHistory(replid, offset);
  // Our own replicas followed the history we just dropped: they must resync with the new one.
  server_.primary().DisconnectReplicas();
  sync_total_ = -1;
  server_.aof().RestartAfterSync();
  return Status::Ok();
}

Status ReplReplica::ReceiveAndLoad(int fd, const Target& t, const std::string& replid,
                                   int64_t offset) {
  int timeout_ms = static_cast<int>(server_.config().GetInt("repl-timeout") * 1000);
  repl::LinkIo io(fd, timeout_ms);
  io.pending() = std::move(link_pending_);
  std::string mark;
  int64_t total = -1;
  KV_TRY(repl::ReadSnapshotHeader(io, &total, &mark));
  sync_total_ = total;
  sync_read_ = 0;
  LOG_NOTICE("MASTER <-> REPLICA sync: loading the snapshot from the socket (diskless load)");
  int64_t start = MonoMs();
  std::unique_ptr<store::Keyspace> side;
  uint64_t keys = 0;
  std::vector<std::string> functions;
  SocketSource src(*this, fd, timeout_ms, std::move(io.pending()), total);
  Status st = LoadSide(fd, src, "from the socket", &side, &keys, &functions);
  if (st.ok() && !mark.empty()) {
    auto m = src.Read(mark.size());
    if (!m.ok() || *m != mark) st = Status::Corruption("snapshot not followed by its $EOF: mark");
  }
  if (st.ok() && total >= 0 && static_cast<int64_t>(src.offset()) != total) {
    st = Status::Corruption("snapshot shorter than the announced length");
  }
  if (!st.ok()) {
    LOG_WARNING("Failed trying to load the MASTER synchronization DB from socket: %s",
                st.message().c_str());
    return st;  // the current dataset stays as it was
  }
  std::string leftover = src.Rest();
  {
    std::lock_guard lock(server_.mu());
    if (Cancelled(t)) return Status::Ok();
    if (Status in = InstallSide(*side, functions, replid, offset); !in.ok()) {
      LOG_WARNING("Failed trying to load the MASTER synchronization DB from socket: %s",
                  in.message().c_str());
      return in;
    }
    LOG_NOTICE("MASTER <-> REPLICA sync: Finished with success (%llu keys, diskless load in "
               "%.3f s)", static_cast<unsigned long long>(keys), (MonoMs() - start) / 1000.0);
    AdoptMaster(fd, std::move(leftover), 0);
  }
  return Status::Ok();  // `side` (the old dataset now) is freed here, outside the lock
}

Status ReplReplica::LoadSnapshot(int fd, const std::string& path, const std::string& replid,
                                 int64_t offset) {
  std::string dbfile = server_.config().GetString("dbfilename");
  if (::rename(path.c_str(), dbfile.c_str()) != 0) {
    Status st = Status::FromErrno("rename " + path, errno);
    unlink(path.c_str());
    return st;
  }
  LOG_NOTICE("MASTER <-> REPLICA sync: Flushing old data");
  server_.keyspace().FlushAll();
  LOG_NOTICE("MASTER <-> REPLICA sync: Loading DB in memory");
  persist::RdbLoadOptions opts = SyncLoadOptions(
      fd, "loaded", "from disk", static_cast<int>(server_.config().GetInt("key-load-delay")));
  persist::RdbLoadResult res;
  int64_t start = MonoMs();
  Status st = persist::LoadRdbFile(dbfile, server_.keyspace(), opts, &res);
  if (st.ok()) st = server_.InstallFunctions(res.functions);
  if (!st.ok()) {
    LOG_WARNING("Failed trying to load the MASTER synchronization DB from disk: %s",
                st.message().c_str());
    server_.keyspace().FlushAll();  // never serve a partial dataset as if it were complete
    return st;
  }
  server_.primary().SetHistory(replid, offset);
  // Our own replicas followed the history we just dropped: they must resync with the new one.
  server_.primary().DisconnectReplicas();
  sync_total_ = -1;
  server_.aof().RestartAfterSync();
  LOG_NOTICE("MASTER <-> REPLICA sync: Finished with success (%llu keys, %.3f s to load)",
             static_cast<unsigned long long>(res.keys_loaded), (MonoMs() - start) / 1000.0);
  return Status::Ok();
}

int ReplReplica::stream_db() const {
  if (master_id_) {
    auto it = server_.clients().find(master_id_);
    if (it != server_.clients().end()) return it->second->session().db;
  }
  return master_db_;
}

void ReplReplica::AdoptMaster(int fd, std::string leftover, int db) {
  // Keyspace lock held.
  uint64_t id = server_.NextClientId();
  master_id_ = id;
  // Link thread, before the link shows as up: INFO must not see it up without its transport.
  data_up_ = data_ != nullptr;
  SetState(State::kConnected);
  last_io_ms_ = WallMs();
  server_.stats().connected_clients++;
  // The first ACK goes at once: a primary that streamed the snapshot waits for it to start the
  // stream (the RDB's end mark must be the last thing read).
  std::string offset = std::to_string(server_.primary().feed().offset());
  std::string ack = repl::ReplCommand({"REPLCONF", "ACK", offset});
  last_ack_ms_ = WallMs();
  server_.group(0).Adopt(net::Fd(fd), id,
                         [leftover = std::move(leftover), db, ack = std::move(ack)](Client& c) {
    c.set_flag(Client::kMaster, true);
    c.session().authenticated = true;
    c.session().obey = true;
    c.session().db = db;
    c.Push(ack);
    if (!leftover.empty()) c.InjectInput(leftover);
  });
}

void ReplReplica::OnMasterCommand(std::string_view raw) {
  last_io_ms_ = WallMs();
  server_.primary().ProxyStream(raw);
}

void ReplReplica::OnClientClosed(Client* c) {
  if (master_id_ == 0 || c->id() != master_id_) return;
  master_id_ = 0;
  master_epoch_++;
  master_db_ = c->session().db;
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

void ReplReplica::SendAck() {
  if (!master_id_) return;
  std::string off = std::to_string(server_.primary().feed().offset());
  std::string ack = repl::ReplCommand({"REPLCONF", "ACK", off});
  for (auto& [id, c] : server_.clients()) {
    if (id == master_id_) c->Push(ack);
  }
}

void ReplReplica::Cron(int64_t now_ms) {
  if (state_ != State::kConnected) return;
  // A primary that went silent for repl-timeout (it PINGs every repl-ping-replica-period).
  if (now_ms - last_io_ms_ > server_.config().GetInt("repl-timeout") * 1000) {
    LOG_WARNING("MASTER timeout: no data nor PING received...");
    for (auto& [id, c] : server_.clients()) {
      if (id == master_id_) c->RequestClose();
    }
    last_io_ms_ = now_ms;
    return;
  }
  if (now_ms - last_ack_ms_ >= 1000) {
    last_ack_ms_ = now_ms;
    SendAck();
  }
}

void ReplReplica::AppendInfo(std::string* out, int64_t now_ms) const {
  char buf[512];
  bool up = state_ == State::kConnected;
  int64_t offset = server_.primary().feed().offset();
  snprintf(buf, sizeof(buf),
           "role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\nmaster_link_status:%s\r\n"
           "master_last_io_seconds_ago:%lld\r\nmaster_sync_in_progress:%d\r\n"
           "slave_read_repl_offset:%lld\r\nslave_repl_offset:%lld\r\n",
           host_.c_str(), port_, up ? "up" : "down",
           static_cast<long long>(up ? (now_ms - last_io_ms_) / 1000 : -1),
           state_ == State::kTransfer ? 1 : 0, static_cast<long long>(offset),
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
           data_up_ ? data_poll_mode_.c_str() : "none", static_cast<unsigned long long>(data_errors_),
           static_cast<unsigned long long>(data_resumes_),
           static_cast<unsigned long long>(data_fallbacks_));
  out->append(buf);
  snprintf(buf, sizeof(buf), "slave_priority:%lld\r\nslave_read_only:%d\r\nreplica_announced:1\r\n",
           static_cast<long long>(server_.config().GetInt("replica-priority")),
           server_.config().GetBool("replica-read-only") ? 1 : 0);
  out->append(buf);
}

void ReplReplica::Role(cmd::Context& c) const {
  c.out.Array(5);
  c.out.Bulk("slave");
  c.out.Bulk(host_);
  c.out.Int(port_);
  c.out.Bulk(StateName(state_));
  c.out.Int(server_.primary().feed().offset());
}

}  // namespace kv::server
