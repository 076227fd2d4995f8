// The replica's side of the RDMA data plane (see replica.h and docs/replication-rdma.md):
// negotiating the data link in the handshake and loading a full resync's snapshot through it
// (the live stream that follows: replica_stream.cc).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "net/socket.h"
#include "persist/crc64.h"
#include "persist/rdb_loader.h"
#include "repl/datalink/link_io.h"
#include "repl/datalink/data_link.h"
#include "repl/replica/replica.h"

namespace kv::repl {

bool Replica::UseDataLink() const {
  std::lock_guard lock(server_.mu());
  return server_.ConfigString("repl-transport") != "tcp" && !fell_back_;
}

void Replica::DataLinkFailed(const std::string& why) {
  std::lock_guard lock(server_.mu());
  data_errors_++;
  if (++data_failures_ >= 3 && !fell_back_) {
    fell_back_ = true;
    data_fallbacks_++;
    LOG_WARNING(
        "The RDMA data link to %s:%d keeps failing (%s): falling back to TCP for this "
        "primary",
        host_.c_str(), port_, why.c_str());
  }
}

transport::ChannelOptions Replica::DataLinkOptionsHere() const {
  transport::ChannelOptions o =
      repl::DataLinkOptions(data_provider_, data_poll_mode_, data_doorbell_);
  if (!data_bind_addr_.empty()) o.bind_addr = data_bind_addr_;
  return o;
}

Result<bool> Replica::SetupDataLink(repl::LinkIo& io, const Target& t) {
  std::string provider, mode;
  {
    std::lock_guard lock(server_.mu());
    provider = server_.ConfigString("repl-rdma-provider");
    mode = server_.ConfigString("repl-transport");
    data_poll_mode_ = server_.ConfigString("repl-rdma-poll-mode");
    data_doorbell_ = server_.ConfigBool("repl-rdma-doorbell");
  }
  data_bind_addr_ = net::LocalIp(io.fd());
  // `auto` uses the data plane only where it pays: on an RDMA NIC (verbs), unless a provider is
  // named. Without one the link simply stays on TCP.
  bool automatic = mode == "auto";
  if (automatic && provider == "auto") provider = "verbs";
  // The provider opens in LocalBlob. Under `auto`, failing there too means this machine has no
  // data plane: the link goes on over TCP at once, with nothing said to the primary.
  std::unique_ptr<transport::StreamReceiver> receiver;
  std::string blob;
  Status local = [&]() -> Status {
    data_provider_ = provider;
    KV_TRY_ASSIGN(rx, transport::CreateReceiver(DataLinkOptionsHere(), 0));
    receiver = std::move(rx);
    KV_TRY_ASSIGN(b, receiver->LocalBlob());
    blob = std::move(b);
    return Status::Ok();
  }();
  if (!local.ok() && automatic) {
    LOG_NOTICE("No RDMA data plane here (%s): replicating over TCP", local.message().c_str());
    return false;
  }
  KV_TRY(local);
  KV_TRY(io.WriteAll(repl::ReplCommand({"REPLCONF", "rdma", provider, HexEncode(blob)})));
  KV_TRY_ASSIGN(line, io.ReadLine());
  std::string peer;
  if (line.rfind("+RDMA ", 0) != 0 || !HexDecode(std::string_view(line).substr(6), &peer)) {
    // Any primary without the extension (redis-server) refuses the option: stay on TCP.
    LOG_NOTICE("Primary %s:%d does not offer the RDMA data plane (%s): replicating over TCP",
               t.host.c_str(), t.port, line.substr(0, 120).c_str());
    return false;
  }
  KV_TRY(receiver->Connect(peer));
  std::string describe = receiver->Describe();
  {
    std::lock_guard lock(server_.mu());
    data_describe_ = describe;
  }
  std::vector<pollfd> fds;
  receiver->WaitFds(&fds);
  // shm meets its peer in shared memory; the others listen on (or send from) the address.
  std::string at = provider == "shm" ? "" : " at " + data_bind_addr_;
  LOG_NOTICE("RDMA data link to the primary is up (%s%s, %s)", describe.c_str(), at.c_str(),
             fds.empty() ? "polling: no wait fd" : "sleeping on its wait fd");
  data_ = std::move(receiver);
  return true;
}

// The data link as a loader Source. A receive thread drains the link into a queue of buffers
// while the loader parses, so the transfer (on the software providers the receiver's progress
// does the copying) overlaps the load instead of alternating with it, and credits go back as
// soon as a slot is copied out. At most kMaxQueued bytes wait in the queue; beyond that the
// thread stops taking chunks and the ring's credits hold the sender back. The thread also
// keeps the CRC-64 of what it received, so the loader's thread (the sync's critical path)
// neither checksums nor copies whole chunks: a Read is a view into the current chunk, and only
// a read that spans chunks copies its own bytes. Views stay valid until the next Read. Stop()
// ends the thread; the link is then the caller's again, with whatever the thread took past the
// snapshot in Rest().
//
// A link that fails mid-snapshot is rebuilt by this thread over the control connection
// (REPLCONF rdma-resume, docs/replication-rdma.md), up to kMaxRebuilds times: the new link
// resumes at the byte the old one had delivered, and the load never notices.
class Replica::ChannelSource : public persist::Source {
 public:
  static constexpr size_t kMaxQueued = 32 << 20;
  static constexpr int kMaxRebuilds = 3;
#ifdef MADV_POPULATE_WRITE
  static constexpr int kMadvPopulateWrite = MADV_POPULATE_WRITE;
#else
  static constexpr int kMadvPopulateWrite = 23;  // Linux 5.14; older C libraries lack the name
#endif

  // `control_fd`: the replication connection, quiet while the snapshot comes over the link.
  // `tee` (optional): gets every byte received, as the loader asks for it (it may go past the
  // end of the snapshot, into the stream).
  ChannelSource(Replica& owner, const Target& t, int control_fd, persist::Sink* tee = nullptr)
      : owner_(owner),
        t_(t),
        control_fd_(control_fd),
        tee_(tee),
        stall_ms_(owner.ConfigInt("repl-timeout") * 1000),
        rx_(owner.data_.get()),
        thread_([this] { Receive(); }) {}
  ~ChannelSource() override { Stop(); }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    wake_.Notify();  // out of a wait on the link, which nothing else may end soon
    if (thread_.joinable()) thread_.join();
  }

  Result<std::string_view> Read(size_t n) override {
    if (cur_.size() - pos_ >= n) {
      std::string_view v(cur_.data() + pos_, n);
      pos_ += n;
      offset_ += n;
      return v;
    }
    scratch_.assign(cur_, pos_);
    pos_ = cur_.size();
    while (scratch_.size() < n) {
      KV_TRY(NextChunk());
      size_t take = std::min(n - scratch_.size(), cur_.size());
      scratch_.append(cur_, 0, take);
      pos_ = take;
    }
    offset_ += n;
    return std::string_view(scratch_);
  }
  uint64_t offset() const override { return offset_; }
  std::optional<uint64_t> CrcSoFar() const override {
    return pos_ == 0 ? cur_crc_ : persist::Crc64(cur_crc_, cur_.data(), pos_);
  }

  // Whether the control connection can carry the stream: false when a rebuild's request went
  // unanswered (its answer may still come). After Stop().
  bool ControlInStep() const { return !reply_pending_; }

  // Everything received past the snapshot: the start of the stream. After Stop().
  std::string Rest() {
    std::string rest = cur_.substr(pos_);
    for (auto& c : queue_) rest += c.bytes;
    queue_.clear();
    return rest;
  }

 private:
  // Replaces the failed link with a new one that resumes where it stopped.
  Status Rebuild(const Status& why) {
    uint64_t at = rx_->consumed_offset();
    LOG_WARNING("Replication data link failed mid-snapshot at byte %llu (%s): rebuilding it",
                static_cast<unsigned long long>(at), why.message().c_str());
    {
      std::lock_guard lock(owner_.server_.mu());
      owner_.data_errors_++;
    }
    rx_->Close();
    const std::string& provider = owner_.data_provider_;
    KV_TRY_ASSIGN(rx, transport::CreateReceiver(owner_.DataLinkOptionsHere(), at));
    KV_TRY_ASSIGN(blob, rx->LocalBlob());
    repl::LinkIo io(control_fd_, 10000, owner_.link_tls_.get());
    // Until its one-line answer is read, the control connection is out of step: an answer that
    // came late would be taken for the start of the stream.
    reply_pending_ = true;
    KV_TRY(io.WriteAll(repl::ReplCommand({"REPLCONF", "rdma-resume", provider, HexEncode(blob)})));
    KV_TRY_ASSIGN(line, io.ReadLine());
    reply_pending_ = false;
    std::string peer;
    if (line.rfind("+RDMA ", 0) != 0 || !HexDecode(std::string_view(line).substr(6), &peer)) {
      return Status::IoError("the primary did not rebuild the data link: " + line.substr(0, 120));
    }
    KV_TRY(rx->Connect(peer));
    owner_.data_ = std::move(rx);  // the failed link goes; nothing else uses it meanwhile
    rx_ = owner_.data_.get();
    {
      std::lock_guard lock(owner_.server_.mu());
      owner_.data_resumes_++;
      owner_.data_describe_ = rx_->Describe();
    }
    LOG_NOTICE("Replication data link rebuilt (%s): the snapshot goes on from byte %llu",
               rx_->Describe().c_str(), static_cast<unsigned long long>(at));
    return Status::Ok();
  }

  void Receive() {
    Status st;
    for (int rebuilds = 0;; ++rebuilds) {
      bool final = false;
      st = ReceiveUntilFailure(&final);
      if (st.ok() || final || rebuilds == kMaxRebuilds || owner_.Cancelled(t_)) break;
      if (Status r = Rebuild(st); !r.ok()) {
        LOG_WARNING("Could not rebuild the replication data link: %s", r.message().c_str());
        break;
      }
    }
    if (st.ok()) return;  // stopped
    {
      std::lock_guard lock(mu_);
      error_ = st;
    }
    cv_.notify_all();
  }

  // Drains the link until it fails (the error), it ends or the source stops (OK). Failures
  // that a rebuild cannot help (cancelled, the stream ended) set *final. Once bytes flow, a
  // link that brings none for repl-timeout has stalled (as a TCP transfer times out); before
  // the first byte nothing is expected yet (the primary saves the file of a disk-based sync),
  // and only the control connection's closing ends the wait.
  Status ReceiveUntilFailure(bool* final) {
    int64_t idle_since = MonoMs();
    Status st;
    while (st.ok()) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || queued_ < kMaxQueued; });
        if (stop_) return Status::Ok();
      }
      if (owner_.Cancelled(t_)) {
        *final = true;
        return Status::Closed("cancelled");
      }
      if (owner_.ShouldBreakDataLink()) {
        st = Status::Closed(repl::kDataLinkBrokenByDebug);
        break;
      }
      auto span = rx_->Peek();
      if (!span.empty()) {
        Chunk c{FreshCopy(span), crc_};
        st = rx_->Consume(span.size());
        crc_ = persist::Crc64(crc_, c.bytes.data(), c.bytes.size());
        owner_.data_bytes_ += span.size();
        idle_since = MonoMs();
        flowing_ = true;
        {
          std::lock_guard lock(mu_);
          queued_ += c.bytes.size();
          queue_.push_back(std::move(c));
        }
        cv_.notify_all();
        continue;
      }
      if (rx_->eof()) {
        *final = true;
        return Status::Closed("the primary ended the data stream");
      }
      if (flowing_ && MonoMs() - idle_since > stall_ms_) {
        st = Status::IoError("data link stalled: no bytes for " +
                             std::to_string(MonoMs() - idle_since) + " ms");
        break;
      }
      if (ControlClosed()) {
        // The primary dropped this replica (a failed snapshot child, say) and may have torn
        // the data link down before it could say so on the link.
        *final = true;
        return Status::Closed("the primary closed the connection");
      }
      st = rx_->Wait(100, &wake_).status();
    }
    return st;
  }

  // Whether the primary closed the control connection (quiet while the snapshot moves), or
  // it failed (tcp-keepalive found the primary's host gone).
  bool ControlClosed() const {
    char b;
    ssize_t n = recv(control_fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }

  // A copy of `span` in a new buffer whose pages are populated in one system call before the
  // copy: a chunk's buffer is fresh memory (the loader's values reuse it once it is freed), and
  // faulting its pages in one by one cost the receive thread more than the copy.
  // Kernels before 5.14 refuse the advice (EINVAL): the copy then faults the pages as before.
  static std::string FreshCopy(std::span<const uint8_t> span) {
    static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    std::string s;
    s.reserve(span.size());
    auto begin = (reinterpret_cast<uintptr_t>(s.data()) + page - 1) & ~(page - 1);
    auto end = (reinterpret_cast<uintptr_t>(s.data()) + span.size()) & ~(page - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, kMadvPopulateWrite);
    s.assign(reinterpret_cast<const char*>(span.data()), span.size());
    return s;
  }

  // Makes the next received chunk the current one.
  Status NextChunk() {
    Chunk c;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || !error_.ok(); });
      if (queue_.empty()) return error_;
      c = std::move(queue_.front());
      queue_.pop_front();
      queued_ -= c.bytes.size();
    }
    cv_.notify_all();
    owner_.sync_read_ += static_cast<int64_t>(c.bytes.size());
    owner_.sync_last_io_ms_ = WallMs();
    if (tee_) KV_TRY(tee_->Write(c.bytes.data(), c.bytes.size()));
    cur_ = std::move(c.bytes);
    cur_crc_ = c.crc_before;
    pos_ = 0;
    return Status::Ok();
  }

  Replica& owner_;
  const Target& t_;
  int control_fd_;
  persist::Sink* tee_;
  const int64_t stall_ms_;         // repl-timeout
  bool flowing_ = false;           // the receive thread's: snapshot bytes have arrived
  bool reply_pending_ = false;     // the receive thread's: a rebuild's answer is not read yet
  transport::StreamReceiver* rx_;  // the receive thread's while it runs
  std::mutex mu_;
  std::condition_variable cv_;
  struct Chunk {
    std::string bytes;
    uint64_t crc_before = 0;  // the CRC-64 of every byte received before these
  };
  // The loader's side: the current chunk, the read position in it, what it has read in all,
  // and the bytes of the last read that spanned chunks.
  std::string cur_;
  uint64_t cur_crc_ = 0;
  size_t pos_ = 0;
  uint64_t offset_ = 0;
  std::string scratch_;
  uint64_t crc_ = 0;               // the receive thread's: of everything it took off the link
  std::deque<Chunk> queue_;        // guarded by mu_
  size_t queued_ = 0;              // guarded by mu_
  bool stop_ = false;              // guarded by mu_
  Status error_;                   // guarded by mu_: why the thread ended
  transport::WaitInterrupt wake_;  // Stop() ends the thread's wait on the link
  std::thread thread_;             // last: starts once the rest is built
};

Status Replica::LoadFromDataLink(const Target& t, int fd, const std::string& replid,
                                 int64_t offset) {
  if (!DisklessLoad()) return ReceiveFromDataLink(t, fd, replid, offset);
  sync_total_ = -1;
  sync_read_ = 0;
  LOG_NOTICE("MASTER <-> REPLICA sync: loading the snapshot from the RDMA data link");
  int64_t start = MonoMs();
  std::unique_ptr<store::Keyspace> side;
  uint64_t keys = 0;
  std::vector<std::string> functions;
  ChannelSource src(*this, t, fd);
  LoadingScope loading(*this, LoadsAsync(replid) ? Loading::kAsync : Loading::kBlocking);
  Status st = LoadSide(fd, src, "over the data link", &side, &keys, &functions);
  src.Stop();
  if (st.ok() && !src.ControlInStep()) {
    st = Status::IoError("the primary did not answer a data-link rebuild in time");
  }
  if (!st.ok()) {
    LOG_WARNING("Failed loading the snapshot from the data link: %s", st.message().c_str());
    DataLinkFailed(st.message());
    data_.reset();
    return st;
  }
  uint64_t id = 0;
  bool cancelled;
  {
    std::lock_guard lock(server_.mu());
    cancelled = Cancelled(t);
    if (!cancelled) st = InstallSide(*side, functions, replid, offset);
    if (!cancelled && st.ok()) {
      LOG_NOTICE(
          "MASTER <-> REPLICA sync: Finished with success (%llu keys, loaded from the "
          "RDMA data link in %.3f s)",
          static_cast<unsigned long long>(keys), (MonoMs() - start) / 1000.0);
      AdoptMaster(fd, "", 0);
      id = master_id_;
    }
  }
  side.reset();  // the old dataset, freed outside the lock
  if (!st.ok()) {
    LOG_WARNING("Failed loading the snapshot from the data link: %s", st.message().c_str());
    DataLinkFailed(st.message());
    data_.reset();
    return st;
  }
  if (cancelled) {
    data_.reset();  // the link goes with its sync (REPLICAOF changed meanwhile)
    return Status::Ok();
  }
  PumpDataLink(t, id, src.Rest());
  return Status::Ok();
}

Status Replica::ReceiveFromDataLink(const Target& t, int fd, const std::string& replid,
                                    int64_t offset) {
  sync_total_ = -1;
  sync_read_ = 0;
  std::string path = TempSnapshotPath();
  net::Fd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.valid()) return Status::FromErrno("open " + path, errno);
  LOG_NOTICE("MASTER <-> REPLICA sync: receiving the snapshot from the RDMA data link to disk");
  int64_t start = MonoMs();
  persist::FdSink sink(out.get());
  ChannelSource src(*this, t, fd, &sink);
  // The walk needs the db count and encoding limits only; nothing is added to this dataset.
  store::Keyspace none(server_.keyspace().num_dbs());
  persist::RdbLoadOptions opts = SyncLoadOptions(fd, link_tls_.get(), "received",
                                                 "over the data link", 0, VerifyRdbChecksum());
  opts.skim = true;
  persist::RdbLoadResult res;
  Status st = persist::LoadRdb(src, none, opts, &res);
  src.Stop();
  if (st.ok() && !src.ControlInStep()) {
    st = Status::IoError("the primary did not answer a data-link rebuild in time");
  }
  // The file got whatever the link delivered; what followed the snapshot is the stream's.
  if (st.ok() && ::ftruncate(out.get(), static_cast<off_t>(res.bytes)) != 0) {
    st = Status::FromErrno("ftruncate " + path, errno);
  }
  if (st.ok() && ::fsync(out.get()) != 0) st = Status::FromErrno("fsync " + path, errno);
  out.Reset();
  uint64_t id = 0;
  if (st.ok()) {
    LOG_NOTICE("MASTER <-> REPLICA sync: %s (%llu keys) received over the data link in %.3f s",
               repl::HumanMB(static_cast<int64_t>(res.bytes)).c_str(),
               static_cast<unsigned long long>(res.keys_loaded), (MonoMs() - start) / 1000.0);
    std::lock_guard lock(server_.mu());
    if (Cancelled(t)) {
      unlink(path.c_str());
      st = Status::Closed("cancelled");
    } else {
      st = LoadSnapshot(fd, path, replid, offset);  // takes the file over, even when it fails
      if (st.ok()) {
        AdoptMaster(fd, "", 0);
        id = master_id_;
      }
    }
  } else {
    unlink(path.c_str());
    LOG_WARNING("Failed receiving the snapshot from the data link: %s", st.message().c_str());
    DataLinkFailed(st.message());
  }
  if (!st.ok()) {
    data_.reset();  // outside the lock: closing a link may wait on its provider
    return st.code() == Code::kClosed && Cancelled(t) ? Status::Ok() : st;
  }
  PumpDataLink(t, id, src.Rest());
  return Status::Ok();
}

}  // namespace kv::repl
