#include "persist/snapshot.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

namespace kv::persist {
namespace {

// An open file descriptor, closed on scope exit.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

AuxFields StandardAux(const SnapshotInfo& info) {
  AuxFields aux;
  aux.emplace_back("redis-ver", info.version);
  aux.emplace_back("redis-bits", std::to_string(sizeof(void*) * 8));
  aux.emplace_back("ctime", std::to_string(static_cast<int64_t>(time(nullptr))));
  aux.emplace_back("used-mem", std::to_string(info.used_memory));
  if (info.has_repl) {
    aux.emplace_back("repl-stream-db", std::to_string(info.repl_stream_db));
    aux.emplace_back("repl-id", info.repl_id);
    aux.emplace_back("repl-offset", std::to_string(info.repl_offset));
  }
  aux.emplace_back("aof-base", info.aof_base ? "1" : "0");
  return aux;
}

Status WriteRdb(store::Keyspace& ks, Sink& sink, const RdbWriteOptions& opts,
                const AuxFields& aux, SaveStats* stats) {
  RdbWriter w(sink, opts);
  KV_TRY(w.WriteHeader(aux));
  for (int i = 0; opts.keys && i < ks.num_dbs(); i++) KV_TRY(w.WriteDb(i, ks.db(i), ks));
  KV_TRY(w.WriteEnd());
  if (stats) {
    stats->bytes = w.bytes_written();
    stats->keys = w.keys_written();
  }
  return Status::Ok();
}

Status SaveFileAtomic(const std::string& path, const std::function<Status(Sink&)>& write,
                      const std::string& temp_name, uint64_t autosync_bytes) {
  std::string dir = DirOf(path);
  std::string tmp =
      dir + "/" + (temp_name.empty() ? "temp-" + std::to_string(getpid()) + ".rdb" : temp_name);
  ScopedFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return Status::FromErrno("failed opening the temp file " + tmp, errno);
  FdSink sink(fd.get());
  sink.SetAutoSync(autosync_bytes);
  Status st = write(sink);
  if (st.ok() && ::fsync(fd.get()) != 0) st = Status::FromErrno("fsync " + tmp, errno);
  if (st.ok() && ::close(fd.release()) != 0) st = Status::FromErrno("close " + tmp, errno);
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    st = Status::FromErrno("rename " + tmp + " to " + path, errno);
  }
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  // Make the rename itself durable.
  ScopedFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() >= 0) ::fsync(dfd.get());
  return Status::Ok();
}

Status SaveRdbFile(store::Keyspace& ks, const std::string& path, const RdbWriteOptions& opts,
                   const AuxFields& aux, SaveStats* stats) {
  return SaveFileAtomic(
      path, [&](Sink& sink) { return WriteRdb(ks, sink, opts, aux, stats); }, "",
      opts.autosync_bytes);
}

MappedFile::~MappedFile() {
  if (p_ != nullptr && n_ > 0) ::munmap(p_, n_);
}

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return Status::NotFound(path + " does not exist");
    return Status::FromErrno("open " + path, errno);
  }
  struct stat sb;
  if (::fstat(fd.get(), &sb) != 0) return Status::FromErrno("fstat " + path, errno);
  auto m = std::unique_ptr<MappedFile>(new MappedFile());
  m->n_ = static_cast<size_t>(sb.st_size);
  if (m->n_ == 0) return m;
  void* p = ::mmap(nullptr, m->n_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
  if (p == MAP_FAILED) return Status::FromErrno("mmap " + path, errno);
  m->p_ = p;
  ::madvise(p, m->n_, MADV_SEQUENTIAL);
  return m;
}

Status LoadRdbFile(const std::string& path, store::Keyspace& ks, const RdbLoadOptions& opts,
                   RdbLoadResult* result) {
  auto map = MappedFile::Open(path);
  if (!map.ok()) return map.status();
  if ((*map)->bytes().empty()) return Status::Corruption(path + " is empty (not an RDB file)");
  MemorySource src((*map)->bytes());
  return LoadRdb(src, ks, opts, result);
}

}  // namespace kv::persist
