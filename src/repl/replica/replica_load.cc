// The replica's full resync over TCP (see replica.h): the snapshot received to a file and
// loaded from its mapping, or loaded from the socket as it arrives into a second dataset
// (repl-diskless-load), and the loaded dataset installed in place of the live one.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <thread>

#include "common/clock.h"
#include "common/logging.h"
#include "net/socket.h"
#include "persist/snapshot.h"
#include "repl/datalink/link_io.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"

namespace kv::repl {

Status Replica::StartSnapshot(repl::LinkIo& io, int64_t* total, std::string* mark) {
  io.pending() = std::move(link_pending_);
  KV_TRY(repl::ReadSnapshotHeader(io, total, mark));
  sync_total_ = *total;
  sync_read_ = 0;
  return Status::Ok();
}

Status Replica::ReceiveSnapshot(int fd, const Target& t, std::string* leftover, std::string* path) {
  int timeout_ms = static_cast<int>(server_.ConfigInt("repl-timeout") * 1000);
  repl::LinkIo io(fd, timeout_ms, link_tls_.get());
  std::string mark;
  int64_t total = -1;
  KV_TRY(StartSnapshot(io, &total, &mark));
  *path = TempSnapshotPath();
  net::Fd out(::open(path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.valid()) return Status::FromErrno("open " + *path, errno);
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
class Replica::SocketSource : public repl::BufferedSource {
 public:
  SocketSource(Replica& owner, int fd, int timeout_ms, std::string pending, int64_t limit)
      : owner_(owner), io_(fd, timeout_ms, owner.link_tls_.get()), limit_(limit) {
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

  Replica& owner_;
  repl::LinkIo io_;
  int64_t limit_;
};

bool Replica::DisklessLoad() const {
  // repl-diskless-load: load straight from the link into a second dataset, swapped in at the
  // end (clients keep reading the old one meanwhile), or receive to disk first.
  std::lock_guard lock(server_.mu());
  std::string load = server_.ConfigString("repl-diskless-load");
  return load == "swapdb" || (load == "on-empty-db" && server_.keyspace().TotalKeys() == 0);
}

std::string Replica::TempSnapshotPath() {
  return "temp-" + std::to_string(WallMs() / 1000) + "." + std::to_string(getpid()) + ".rdb";
}

persist::RdbLoadOptions Replica::SyncLoadOptions(int fd, net::TlsConn* tls, const char* done,
                                                 const char* from, int key_load_delay_us,
                                                 bool verify_checksum) {
  persist::RdbLoadOptions opts;
  opts.drop_expired = false;
  opts.verify_checksum = verify_checksum;
  opts.now_ms = WallMs();
  opts.key_load_delay_us = key_load_delay_us;
  int64_t start = MonoMs();
  auto last_log = std::make_shared<int64_t>(start);
  auto last_newline = std::make_shared<int64_t>(0);
  opts.progress = [=](uint64_t off) {
    int64_t now = MonoMs();
    if (now - *last_newline >= 1000) {
      *last_newline = now;
      repl::SendKeepalive(fd, tls);
    }
    if (now - *last_log < 1000) return;
    *last_log = now;
    LOG_NOTICE("MASTER <-> REPLICA sync: %s %s %s, %.1f MB/s", repl::HumanMB(off).c_str(), done,
               from, off / 1e6 / ((now - start) / 1000.0));
  };
  return opts;
}

int64_t Replica::ConfigInt(const char* name) {
  std::lock_guard lock(server_.mu());
  return server_.ConfigInt(name);
}

bool Replica::VerifyRdbChecksum() {
  std::lock_guard lock(server_.mu());
  return server_.VerifyRdbChecksum();
}

bool Replica::LoadsAsync(const std::string& replid) {
  // As Redis: the old dataset is served only while it is an earlier point of the same history
  // (a full resync that the backlog could not spare); another primary's data is not.
  std::lock_guard lock(server_.mu());
  return server_.ConfigString("repl-diskless-load") == "swapdb" && replid == primary_.replid();
}

Replica::LoadingScope::LoadingScope(Replica& r, Loading kind) : r_(r), kind_(kind) {
  r_.loading_ = kind;
  LOG_NOTICE("MASTER <-> REPLICA sync: Loading DB in memory");
}

Replica::LoadingScope::~LoadingScope() {
  bool loaded = r_.loading_ == Loading::kNone;  // InstallSide took the new dataset
  r_.loading_ = Loading::kNone;
  if (kind_ == Loading::kAsync) {
    LOG_NOTICE("MASTER <-> REPLICA sync: Discarding %s DB in background",
               loaded ? "old" : "temporary");
  }
}

Status Replica::LoadSide(int fd, persist::Source& src, const char* from,
                         std::unique_ptr<store::Keyspace>* side, uint64_t* keys,
                         std::vector<std::string>* functions) {
  *side = std::make_unique<store::Keyspace>(server_.keyspace().num_dbs());
  (*side)->limits() = server_.keyspace().limits();
  (*side)->set_expire_deletes(false);
  persist::RdbLoadOptions opts =
      SyncLoadOptions(fd, link_tls_.get(), "loaded", from,
                      static_cast<int>(ConfigInt("key-load-delay")), VerifyRdbChecksum());
  opts.progress_bytes = static_cast<uint64_t>(ConfigInt("loading-process-events-interval-bytes"));
  persist::RdbLoadResult res;
  KV_TRY(persist::LoadRdb(src, **side, opts, &res));
  *keys = res.keys_loaded;
  *functions = std::move(res.functions);
  return Status::Ok();
}

Status Replica::InstallSide(store::Keyspace& side, const std::vector<std::string>& functions,
                            const std::string& replid, int64_t offset) {
  KV_TRY(server_.InstallFunctions(functions));
  if (async_loading()) LOG_NOTICE("MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
  loading_ = Loading::kNone;
  server_.DatasetReplaced();
  server_.keyspace().SwapData(side);
  // The old dataset goes to the background freer whatever replica-lazy-flush says, as Redis
  // discards the dataset a diskless load replaced (discardTempDb is always async).
  server_.keyspace().FreeDbsAsync(side);
  primary_.SetHistory(replid, offset);
  // Our own replicas followed the history we just dropped: they must resync with the new one.
  primary_.DisconnectReplicas();
  sync_total_ = -1;
  server_.RestartAofAfterSync();
  return Status::Ok();
}

Status Replica::ReceiveAndLoad(int fd, const Target& t, const std::string& replid, int64_t offset) {
  int timeout_ms = static_cast<int>(server_.ConfigInt("repl-timeout") * 1000);
  repl::LinkIo io(fd, timeout_ms, link_tls_.get());
  std::string mark;
  int64_t total = -1;
  KV_TRY(StartSnapshot(io, &total, &mark));
  LOG_NOTICE("MASTER <-> REPLICA sync: loading the snapshot from the socket (diskless load)");
  int64_t start = MonoMs();
  std::unique_ptr<store::Keyspace> side;
  uint64_t keys = 0;
  std::vector<std::string> functions;
  SocketSource src(*this, fd, timeout_ms, std::move(io.pending()), total);
  LoadingScope loading(*this, LoadsAsync(replid) ? Loading::kAsync : Loading::kBlocking);
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
    LOG_NOTICE(
        "MASTER <-> REPLICA sync: Finished with success (%llu keys, diskless load in "
        "%.3f s)",
        static_cast<unsigned long long>(keys), (MonoMs() - start) / 1000.0);
    AdoptMaster(fd, std::move(leftover), 0);
  }
  return Status::Ok();
}

Status Replica::LoadSnapshot(int fd, const std::string& path, const std::string& replid,
                             int64_t offset) {
  std::string dbfile = server_.ConfigString("dbfilename");
  if (::rename(path.c_str(), dbfile.c_str()) != 0) {
    Status st = Status::FromErrno("rename " + path, errno);
    unlink(path.c_str());
    return st;
  }
  LOG_NOTICE("MASTER <-> REPLICA sync: Flushing old data");
  server_.DatasetReplaced();
  server_.keyspace().FlushAll(server_.ConfigBool("replica-lazy-flush"));
  LoadingScope loading(*this, Loading::kInPlace);
  persist::RdbLoadOptions opts = SyncLoadOptions(
      fd, link_tls_.get(), "loaded", "from disk",
      static_cast<int>(server_.ConfigInt("key-load-delay")), server_.VerifyRdbChecksum());
  opts.progress_bytes =
      static_cast<uint64_t>(server_.ConfigInt("loading-process-events-interval-bytes"));
  // As Redis processes events while it loads: the lock (held by the caller) is let go every
  // 10 ms at most, so clients get -LOADING and INFO, and the cluster bus announces the loading
  // replica (offset 0). A Stop (or the end of following) ends the load.
  opts.progress = [this, progress = std::move(opts.progress),
                   last_yield = MonoMs()](uint64_t off) mutable {
    progress(off);
    if (MonoMs() - last_yield < 10) return;
    server_.mu().unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    server_.mu().lock();
    last_yield = MonoMs();
  };
  opts.stop = [this, generation = generation_.load()] { return generation_.load() != generation; };
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
  primary_.SetHistory(replid, offset);
  // Our own replicas followed the history we just dropped: they must resync with the new one.
  primary_.DisconnectReplicas();
  sync_total_ = -1;
  server_.RestartAofAfterSync();
  LOG_NOTICE("MASTER <-> REPLICA sync: Finished with success (%llu keys, %.3f s to load)",
             static_cast<unsigned long long>(res.keys_loaded), (MonoMs() - start) / 1000.0);
  // rdb-del-sync-files: a replica without persistence keeps no copy of its primary's data.
  if (server_.ConfigBool("rdb-del-sync-files") && server_.ConfigString("save").empty() &&
      !server_.ConfigBool("appendonly")) {
    LOG_NOTICE(
        "Removing the RDB file obtained from the master. This replica has persistence "
        "disabled");
    unlink(dbfile.c_str());
  }
  return Status::Ok();
}

}  // namespace kv::repl
