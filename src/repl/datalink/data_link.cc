// The data link's lifecycle (setup, resume, teardown) and the live stream, on the primary's
// side; the snapshot it sends first: data_link_snapshot.cc.
#include "repl/datalink/data_link.h"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"

namespace kv::repl {

constexpr int kIoTimeoutMs = 60000;

transport::ChannelOptions DataLinkOptions(const std::string& provider, const std::string& poll_mode,
                                          bool doorbell) {
  transport::ChannelOptions o;
  o.doorbell = doorbell;
  if (auto mode = transport::ParsePollMode(poll_mode); mode.ok()) o.poll_mode = *mode;
  if (provider == "sockets") {
    o.transport = "tcp";  // the channel over plain sockets (same protocol, no libfabric)
  } else {
    o.transport = "fabric";
    o.provider = provider;
  }
  o.stall_timeout_ms = kIoTimeoutMs;
  return o;
}

Result<std::unique_ptr<DataLinkSender>> DataLinkSender::Create(
    const transport::ChannelOptions& opts, std::string* local_blob) {
  KV_TRY_ASSIGN(sender, transport::CreateSender(opts));
  KV_TRY_ASSIGN(blob, sender->LocalBlob());
  *local_blob = std::move(blob);
  auto link = std::unique_ptr<DataLinkSender>(new DataLinkSender(std::move(sender), opts));
  link->describe_ = link->sender_->Describe();
  link->credits_ = opts.credits;
  return link;
}

DataLinkSender::~DataLinkSender() {
  Break();
  if (thread_.joinable()) thread_.join();
  UnmapFile();
}

void DataLinkSender::Start(std::string peer_blob) {
  thread_ = std::thread([this, blob = std::move(peer_blob)] { Run(blob); });
}

void DataLinkSender::SetSnapshotRing(std::unique_ptr<SnapshotRing> ring) {
  std::lock_guard lock(mu_);
  ring_ = std::move(ring);
  ring_base_ = bytes_;  // nothing goes out ahead of the snapshot
  if (stop_) ring_->Abandon();
  wake_.Notify();
}

void DataLinkSender::ExpectSnapshotFile() {
  std::lock_guard lock(mu_);
  snapshot_file_expected_ = true;
}

void DataLinkSender::SetSnapshotFile(const std::string& path) {
  net::Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    LOG_WARNING("Can't open the snapshot file %s: %s", path.c_str(), strerror(errno));
  }
  std::lock_guard lock(mu_);
  snapshot_file_ = path;
  snapshot_fd_ = std::move(fd);
  wake_.Notify();
}

void DataLinkSender::FailAfter(uint64_t after) {
  fail_at_ = static_cast<int64_t>(bytes_.load() + after);
  wake_.Notify();
}

bool DataLinkSender::RingFinished() const {
  std::lock_guard lock(mu_);
  return ring_ && ring_->finished();
}

bool DataLinkSender::Resumable(int64_t grace_ms) const {
  if (!failed_) return false;
  std::lock_guard lock(mu_);
  bool unsent = (ring_ && !ring_->failed()) || file_unsent_;
  return !stop_ && unsent && MonoMs() - failed_ms_ < grace_ms;
}

Status DataLinkSender::Resume(std::string peer_blob, std::string* local_blob) {
  // The replica gave the old link up; it may not have failed here yet.
  if (!failed_) FailAfter(0);
  if (thread_.joinable()) thread_.join();
  if (!Resumable(INT64_MAX)) return Status::Invalid("no data link to resume");
  KV_TRY_ASSIGN(sender, transport::CreateSender(opts_));
  KV_TRY_ASSIGN(blob, sender->LocalBlob());
  *local_blob = std::move(blob);
  {
    std::lock_guard io(io_mu_);
    chunks_earlier_ = chunks_;
    sender_ = std::move(sender);
  }
  describe_ = sender_->Describe();
  {
    std::lock_guard lock(mu_);
    error_.clear();
  }
  failed_ = false;
  fail_at_ = -1;
  resuming_ = true;
  Start(std::move(peer_blob));
  return Status::Ok();
}

void DataLinkSender::Enqueue(std::string_view bytes) {
  std::lock_guard lock(mu_);
  if (queue_.empty() || queue_.back().size() > (1 << 20)) queue_.emplace_back();
  queue_.back().append(bytes);
  enqueued_ += bytes.size();
  // Until the snapshot is behind (or while the thread owns the queue's head) only the thread
  // writes; once it is, Kick() does.
  if (!Kickable()) wake_.Notify();
}

bool DataLinkSender::Kickable() const {
  return streaming_ && !batch_in_flight_ && !stop_ && fail_at_ < 0;
}

void DataLinkSender::Kick() {
  kick_requested_.store(true);
  for (int pass = 0; kick_requested_.load(); pass++) {
    if (pass == kMaxKickPasses) {
      // Others keep adding bytes: the link's thread takes over rather than this caller, whose
      // own clients wait meanwhile.
      wake_.Notify();
      return;
    }
    std::unique_lock io(io_mu_, std::try_to_lock);
    if (!io.owns_lock()) {
      // Another Kick() looks again once it lets go (it clears kicking_ before it does); the
      // thread, awake, takes the queue itself before it sleeps.
      if (!kicking_.load()) wake_.Notify();
      return;
    }
    kicking_.store(true);
    kick_requested_.store(false);
    WriteQueued();
    kicking_.store(false);
  }
}

void DataLinkSender::WriteQueued() {
  std::deque<std::string> batch;
  size_t written = 0;  // by this call
  for (int pass = 0;; pass++) {
    {
      std::lock_guard lock(mu_);
      // First, whatever the pass: what credits did not allow goes back to the head (ahead of
      // what was enqueued meanwhile), and the thread waits for them.
      if (!batch.empty()) {
        for (auto it = batch.rbegin(); it != batch.rend(); ++it) queue_.push_front(std::move(*it));
        wake_.Notify();
        break;
      }
      if (pass == kMaxKickPasses && !queue_.empty()) {
        wake_.Notify();  // as in Kick(): the thread takes the rest
        break;
      }
      if (queue_.empty()) break;
      if (!Kickable() || failed_ || !sender_->status().ok()) {
        wake_.Notify();
        break;
      }
      batch.swap(queue_);
    }
    // While the stream flows the thread does not wake for completions and credits (Doze):
    // they are reaped here, after the write (which a provider may only start, its progress
    // sending the rest), and before a second try when the first found no credit.
    while (!batch.empty()) {
      std::string_view bytes = batch.front();
      bool ok = true;
      for (int attempt = 0; attempt < 2 && !bytes.empty() && ok; attempt++) {
        auto n = sender_->Write(
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
        if (n.ok()) {
          bytes_ += *n;
          stream_sent_ += *n;
          written += *n;
          bytes.remove_prefix(*n);
        }
        ok = n.ok() && sender_->Progress().ok();
      }
      if (!bytes.empty()) {
        batch.front().erase(0, batch.front().size() - bytes.size());
        break;
      }
      batch.pop_front();
    }
  }
  NoteStats();
  // A write may outlast its post and that Progress() (a provider that could not post it yet,
  // sends what its socket takes, or copies in segments): if it is still in flight, a thread
  // in its long, quiet sleep is woken to poll the link until it is through.
  if (written > 0 && long_doze_.load() && sender_->WritesInFlight()) wake_.Notify();
}

void DataLinkSender::Break() {
  std::lock_guard lock(mu_);
  stop_ = true;
  if (ring_) ring_->Abandon();  // the child stops filling it
  wake_.Notify();
}

std::string DataLinkSender::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

std::string DataLinkSender::Describe() const {
  return "provider=" + describe_ + ",poll=" + transport::PollModeName(opts_.poll_mode) +
         ",chunk=" + std::to_string(chunk_.load()) + ",chunks=" + std::to_string(chunks_.load()) +
         ",credits=" + std::to_string(credits_) + ",bytes=" + std::to_string(bytes_.load());
}

Status DataLinkSender::Doze(std::unique_lock<std::mutex>& io, int timeout_ms) {
  if (wake_.BeginSleep()) {
    long_doze_ = timeout_ms > 1;
    io.unlock();
    pollfd pfd{wake_.fd(), POLLIN, 0};
    (void)poll(&pfd, 1, timeout_ms);
    io.lock();
    long_doze_ = false;
    wake_.EndSleep();
  }
  wake_.Take();
  return sender_->Progress().status();
}

void DataLinkSender::NoteStats() {
  const transport::LinkStats& s = sender_->stats();
  chunk_ = s.chunk_size;
  chunks_ = chunks_earlier_ + s.chunks;
}

Status DataLinkSender::DebugFailure() const {
  int64_t at = fail_at_;
  if (at >= 0 && static_cast<int64_t>(bytes_) >= at) {
    return Status::Closed(kDataLinkBrokenByDebug);
  }
  return Status::Ok();
}

bool DataLinkSender::Stopped() const {
  std::lock_guard lock(mu_);
  return stop_;
}

Status DataLinkSender::AwaitCredit(int64_t* last_progress_ms) {
  if (Stopped()) return Status::Closed("data link closed");
  KV_TRY(DebugFailure());
  KV_TRY(sender_->Wait(100, &wake_, &io_mu_).status());
  if (MonoMs() - *last_progress_ms > kIoTimeoutMs) return Status::IoError("data link stalled");
  return Status::Ok();
}

Status DataLinkSender::SendBytes(std::string_view data) {
  auto span = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  int64_t last_progress = MonoMs();
  while (!span.empty()) {
    KV_TRY(DebugFailure());
    KV_TRY_ASSIGN(n, sender_->Write(UpToFailurePoint(span)));
    if (n > 0) {
      span = span.subspan(n);
      bytes_ += n;
      stream_sent_ += n;
      last_progress = MonoMs();
      continue;
    }
    KV_TRY(AwaitCredit(&last_progress));
  }
  NoteStats();
  return Status::Ok();
}

std::span<const uint8_t> DataLinkSender::UpToFailurePoint(std::span<const uint8_t> part) const {
  int64_t at = fail_at_;
  if (at < 0) return part;
  return part.first(std::min<size_t>(part.size(), static_cast<size_t>(at) - bytes_));
}

void DataLinkSender::Run(std::string peer_blob) {
  std::unique_lock io(io_mu_);  // released only while the link sleeps
  Status st = sender_->Connect(peer_blob);
  if (st.ok() && resuming_) st = Replay();
  resuming_ = false;
  while (st.ok()) {
    bool ring = false;
    bool streaming = false;
    std::string file;
    net::Fd file_fd;
    bool file_pending = false;
    std::deque<std::string> batch;
    {
      std::lock_guard lock(mu_);
      if (stop_) {
        st = Status::Closed("data link closed");
        break;
      }
      ring = ring_ != nullptr;
      if (snapshot_file_expected_) {
        file.swap(snapshot_file_);
        file_fd = std::move(snapshot_fd_);
        file_pending = file.empty();
        if (!file_pending) snapshot_file_expected_ = false;
      }
      if (!ring && file.empty() && !file_pending && !file_.data) {
        batch.swap(queue_);
        batch_in_flight_ = !batch.empty();
        // Stream bytes with no snapshot pending: a snapshot, if there is one, is behind us
        // (it is announced before the bytes that follow it are enqueued).
        if (!batch.empty() && !streaming_) {
          streaming_ = true;
          sender_->UseStreamPollMode();
        }
      }
      streaming = streaming_;
    }
    if (!file.empty()) st = MapFile(file, std::move(file_fd));
    if (file_.data) {
      if (st.ok()) st = SendMapped();
      continue;
    }
    if (ring) {
      // The snapshot goes first, whole; stream bytes wait in the queue behind it.
      st = SendRing();
      continue;
    }
    for (const auto& b : batch) {
      if (!st.ok()) break;
      st = SendBytes(b);
    }
    if (!batch.empty()) {
      std::lock_guard lock(mu_);
      batch_in_flight_ = false;
    }
    if (!st.ok() || !batch.empty()) continue;
    // Nothing queued (or the snapshot file not saved yet): drive the link (completions of what
    // was just written, then credits and acks) until more bytes are enqueued. The poll mode
    // decides between spinning and sleeping on the link's fds; Enqueue(), Kick() and Break()
    // cut the wait short, and while the thread sleeps Kick() may write to the link itself.
    if (st = DebugFailure(); !st.ok()) break;
    bool quiet = sender_->acked_offset() == sender_->committed_offset();
    if (streaming && opts_.poll_mode != transport::PollMode::kPerformance) {
      st = Doze(io, quiet ? 100 : 1);
      continue;
    }
    auto r = sender_->Wait(quiet ? 100 : 10, &wake_, &io_mu_);
    if (!r.ok()) st = r.status();
  }
  if (st.code() != Code::kClosed || !Stopped()) {
    LOG_WARNING("Replication data link (%s) failed: %s", describe_.c_str(), st.message().c_str());
  }
  {
    std::lock_guard lock(mu_);
    error_ = st.message();
  }
  sender_->Close();
  failed_ms_ = MonoMs();
  failed_ = true;
}  // io_mu_ released: Kick sees failed_ and leaves the bytes queued

}  // namespace kv::repl
