#include "server/client.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "server/acl_users.h"
#include "server/persistence/aof.h"
#include "server/poll_group.h"
#include "server/server.h"

namespace kv::server {

namespace {
// Backpressure: a client whose unread replies pass this is not read from until they drain, so a
// peer that pipelines without reading cannot grow the server's memory without bound.
constexpr size_t kPauseReadingAt = 64 * 1024 * 1024;
constexpr size_t kResumeReadingAt = 4 * 1024 * 1024;
// A client that has not authenticated where a password is required may hold this much unsent
// output, whatever client-output-buffer-limit says (CVE-2025-21605: one that sends commands and
// never reads the -NOAUTH replies grew them to 64 MiB each). Redis allows 1 KiB past its 16 KiB
// static reply buffer; so does kvstore, which has no such buffer.
constexpr size_t kUnauthenticatedOutputLimit = 16 * 1024 + 1024;
// Pushed output (pushed_) keeps its buffer up to this once drained; a bigger one is freed.
// Kept, a burst (invalidations an eviction caused, say) would stay in used_memory after it was
// sent, and maxmemory would evict again for it.
constexpr size_t kKeepPushBuffer = 16 * 1024;
}  // namespace

Client::Client(Server& server, PollGroup& group, net::Fd fd, uint64_t id)
    : server_(server), group_(group), fd_(std::move(fd)) {
  session_.id = id;
  unix_socket_ = net::IsUnixSocket(fd_.get());
  peer_ = net::PeerName(fd_.get());
  local_ = net::SockName(fd_.get());
  created_ms_ = MonoMs();
  last_interaction_ms_ = created_ms_;
  rb_peak_reset_ms_ = created_ms_;
  out_.reserve(rb_size_);  // the reply buffer, as Redis allocates one for each client
  out_cap_ = out_.capacity();
  session_.authenticated = !server.auth_required();
  acl_user_ = server.acl().Default();  // the same object for the server's life
}

Client::~Client() = default;

void Client::Start() {
  if (!unix_socket_) net::SetNoDelay(fd_.get());
  server_.RunLocked([this] { server_.RegisterClient(this); });
  Status s = group_.loop().AddFd(fd_.get(), net::EventLoop::kReadable, this);
  if (!s.ok()) {
    Close("cannot register: " + s.message());
    return;
  }
  if (!in_.empty()) ResumeInput();  // injected input does not wait for the socket
  // A TLS session handed over with input OpenSSL already holds (the primary's link).
  if (tls_ && tls_->established() && tls_->HasPending()) HandleReadable();
}

void Client::Close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  LOG_VERBOSE("Client id=%llu addr=%s closed: %s", static_cast<unsigned long long>(id()),
              peer_.c_str(), reason.c_str());
  server_.RunLocked([this] {
    server_.UnregisterClient(this);
    server_.client_eviction().Remove(*this);
  });
  if (relay_.valid()) StopRelay();
  group_.loop().RemoveFd(fd_.get(), this);
  fd_.Reset();
  group_.Retire(id());
}

void Client::OnEvents(uint32_t events) {
  if (closed_) return;
  if (events & (EPOLLERR | EPOLLHUP)) {
    if (!(events & EPOLLIN)) {
      Close("connection error");
      return;
    }
  }
  if (tls_ && !tls_->established()) {
    if (!TlsReady()) return;
    events |= EPOLLIN;  // the first request may be here already
  }
  // TLS: a read that needed the socket writable, or a write that needed it readable.
  if ((events & EPOLLOUT) && tls_ && tls_->read_wants_write()) events |= EPOLLIN;
  if ((events & EPOLLIN) && tls_ && tls_->write_wants_read()) events |= EPOLLOUT;
  if (events & EPOLLOUT) {
    if (!Flush()) return;
    if (reading_paused_ && out_.size() - out_sent_ < kResumeReadingAt) {
      reading_paused_ = false;
      ProcessInput();  // input that arrived while paused
      if (closed_) return;
      UpdateInterest();
    }
  }
  if ((events & EPOLLIN) && !reading_paused_) HandleReadable();
}

bool Client::ServeWhileBusy() {
  // Clients CLIENT PAUSE holds, or released and waiting for their turn, wait for the script,
  // and so does the primary's stream (its end is the replica's business once the script ends).
  if (closed_ || blocked() || paused() || resuming() || (flags_ & kMaster)) return false;
  if (tls_ && !tls_->established()) return false;  // its handshake waits too
  bool eof = false;
  for (;;) {
    char* tail = in_.WritableTail(kReadChunk);
    if (!tail) return false;
    ssize_t n = SockRead(tail, in_.tail_room());
    if (n <= 0) {
      eof = n == 0;  // the peer is gone: the client goes now, as Redis frees it meanwhile
      break;
    }
    in_.Commit(static_cast<size_t>(n));
    server_.stats().net_input_bytes.Add(static_cast<uint64_t>(n));
  }
  // A replica's acknowledgements wait for the script; only its end is seen now (a script may
  // be waiting for INFO's connected_slaves to change).
  if (flags_ & kReplica) return eof;
  ProcessInput();
  while (out_sent_ < out_.size()) {
    ssize_t n = SockWrite(out_.data() + out_sent_, out_.size() - out_sent_);
    if (n <= 0) break;
    out_sent_ += static_cast<size_t>(n);
    server_.stats().net_output_bytes.Add(static_cast<uint64_t>(n));
  }
  // QUIT: the peer sees the close now; the client goes once the loop reads its end.
  if (session_.close_after_reply && out_sent_ == out_.size()) ::shutdown(fd_.get(), SHUT_RDWR);
  return eof;
}

void Client::HandleReadable() {
  for (int pass = 0;; pass++) {
    ReadResult r = ReadInput();
    if (r == ReadResult::kClosed) return;
    if (r == ReadResult::kNothing && pass == 0) return;
    if (r != ReadResult::kNothing) {
      TakePushed();
      ProcessInput();
    }
    if (closed_) return;
    // The first read ends before a big argument's header is parsed: with more of it waiting
    // in the socket, the rest is read now (once more), as Redis reads a big argument whole.
    if (pass > 0 || r != ReadResult::kFilled || parser_.BytesWanted() <= in_.size() || blocked() ||
        paused() || reading_paused_) {
      break;
    }
  }
  if (DeferFlush()) return;
  if (!Flush()) return;
  UpdateInterest();
}

thread_local Client::RoundFlush Client::round_flush;

// As Redis writes the replies of an event-loop round together before it sleeps: the round's
// first client is answered at once (the lowest latency while the load is light), the others at
// the round's end, back to back. A peer serving many connections (a benchmark, a proxy, an
// application's pool) is then woken once for them, not once per reply: each wake-up of a
// sleeping peer costs an inter-processor interrupt, several microseconds on a VM (GEOSEARCH
// BYBOX at pipeline 1 with 50 clients went from 0.76x to 1.09x of Redis).
bool Client::DeferFlush() {
  if (out_sent_ == out_.size() || !group_.loop().InLoopThread()) return false;
  if (!round_flush.posted) {
    round_flush.posted = true;
    group_.loop().Post([&group = group_] {
      round_flush.posted = false;
      std::vector<uint64_t> waiting;
      waiting.swap(round_flush.waiting);
      for (uint64_t id : waiting) {
        Client* c = group.Find(id);
        if (c == nullptr || c->closed_) continue;
        if (c->Flush()) c->UpdateInterest();
      }
    });
    return false;
  }
  round_flush.waiting.push_back(id());
  return true;
}

// Parses ahead up to kBatch complete requests (multibulk, authenticated clients only), so
// that the keys they touch can be prefetched together before they run in order.
size_t Client::ParseBatch(resp::ParserLimits& limits, bool* protocol_error) {
  batch_.clear();
  batch_args_.clear();
  size_t off = 0;
  while (batch_.size() < kBatch && off < in_.size()) {
    bool inline_req = in_.data()[off] != '*';
    limits.authenticated = session_.authenticated;
    auto r = parser_.Parse(in_.data() + off, in_.size() - off, limits);
    if (r == resp::RequestParser::kIncomplete) break;
    if (r == resp::RequestParser::kError) {
      // Reported when it is the next request to run, after the ones before it.
      *protocol_error = batch_.empty();
      break;
    }
    batch_.push_back({batch_args_.size(), parser_.args().size(), parser_.request_size()});
    batch_args_.insert(batch_args_.end(), parser_.args().begin(), parser_.args().end());
    off += parser_.request_size();
    // Inline arguments live in the parser until the next Parse; AUTH may change the limits.
    if (inline_req || !session_.authenticated) break;
  }
  return batch_.size();
}

// The data links this thread gave stream bytes in the current event-loop round.
thread_local Client::RoundKicks Client::round_kicks;

// The data links' writes (system calls, on emulated providers) go out after the lock. The
// first batch of an event-loop round is written at once (the lowest latency while the load is
// light); the writes of the round's later batches wait for the round's end and go out together,
// one chunk per link instead of one per client, as the stream to a TCP replica is written once
// per round.
void Client::KickDataLinksAfterRound() {
  if (round_kicks.links.empty()) return;
  net::EventLoop& loop = group_.loop();
  if (!loop.InLoopThread()) {
    repl::Primary::KickDataLinks(&round_kicks.links);
    return;
  }
  if (round_kicks.posted) return;  // a later batch: the round's end writes it
  round_kicks.posted = true;
  repl::Primary::KickDataLinks(&round_kicks.links);
  loop.Post([] {
    round_kicks.posted = false;
    repl::Primary::KickDataLinks(&round_kicks.links);
  });
}

void Client::ProcessInput() {
  std::unique_lock lock(server_.mu(), std::defer_lock);
  resp::ParserLimits limits;
  limits.max_bulk_len = server_.max_bulk_len();
  while (!in_.empty() && !session_.close_after_reply && !blocked() && !paused()) {
    bool protocol_error = false;
    size_t n = ParseBatch(limits, &protocol_error);
    if (protocol_error) {
      LOG_VERBOSE("Protocol error (%s) from client id=%llu addr=%s", parser_.error().c_str(),
                  static_cast<unsigned long long>(id()), peer_.c_str());
      resp::ReplyWriter(&out_).Error(parser_.error());
      session_.close_after_reply = true;
      in_.Clear();
      break;
    }
    if (n == 0) break;  // incomplete
    bool was_locked = lock.owns_lock();
    if (!was_locked && !server_.LockUnlessBusy(lock)) {
      // A busy script holds the lock: answer without it. A replica's or the primary's stream
      // waits for the script instead (a reply would land inside it), and so does a client
      // released from CLIENT PAUSE (what it held runs in its turn, as Redis runs it after).
      if (flags_ & (kReplica | kMaster)) {
        RetryAfterScript();  // no more input may come to wake it once the script is over
        break;
      }
      if (resuming()) break;
      for (size_t i = 0; i < n; i++) {
        const Pending& req = batch_[i];
        auto args = std::span(batch_args_).subspan(req.first_arg, req.argc);
        if (req.argc > 0 && server_.NeedsScriptThread(*this, args)) {
          // What needs the lock runs on the script's thread; if the script ended first, the
          // rest of the batch runs as usual.
          if (!server_.RunOnScriptThread(*this, args)) {
            parser_.Reset();
            break;
          }
        } else if (req.argc > 0 && server_.ReplyWhileBusy(args, &out_, session_.resp)) {
          session_.close_after_reply = true;  // QUIT: what follows it is not read
          in_.Clear();
          break;
        }
        in_.Consume(req.size);
      }
      continue;
    }
    if (!was_locked) {
      // The final save is made: a command run now would be acknowledged and lost.
      if (server_.shutdown_requested()) break;
      server_.primary().HoldDataLinkBytes();
    }
    if (CheckMemoryLocked()) break;  // evicted (maxmemory-clients): nothing more runs
    if (n > 1) {
      prefetch_keys_.clear();
      for (const Pending& req : batch_) {
        auto key = server_.FirstKey(std::span(batch_args_).subspan(req.first_arg, req.argc));
        if (!key.empty()) prefetch_keys_.push_back(key);
      }
      server_.PrefetchKeys(session_.db, prefetch_keys_);
    }
    size_t done = 0;
    bool client_eviction = server_.client_eviction().enabled();
    for (; done < n; done++) {
      const Pending& req = batch_[done];
      if (req.argc > 0) {
        auto args = std::span(batch_args_).subspan(req.first_arg, req.argc);
        bool replica = flags_ & kReplica;
        size_t replied = out_.size();
        server_.Execute(*this, args);
        if (paused()) break;  // held by CLIENT PAUSE: the request stays in in_ for its rerun
        // A replica that blocked would get its reply later, inside the stream.
        if (replica && (out_.size() != replied || blocked()) && !IsDataLinkResume(args)) {
          DropReplicaThatGotAReply(args, replied);
        }
      } else if (flags_ & kReplica) {
        server_.primary().ReplicaNewline(*this);  // a loading replica's sign of life
      }
      // The primary's stream: what was applied counts toward the replication offset, a
      // transaction once its EXEC (or DISCARD) ran.
      if (flags_ & kMaster) {
        std::string_view raw(in_.data(), req.size);
        if (in_multi() || !master_multi_.empty()) master_multi_.append(raw);
        if (!in_multi()) {
          server_.OnMasterCommand(*this, master_multi_.empty() ? raw : master_multi_);
          if (master_multi_.capacity() > 64 * 1024)
            std::string().swap(master_multi_);
          else
            master_multi_.clear();
        }
      }
      in_.Consume(req.size);
      NoteMasterPending();
      // As Redis after each command: the client's memory with this reply counts at once, so
      // that clients are evicted before keys (the next command anywhere evicts keys by a
      // used_memory that holds it). Evicted: the rest is not run.
      if (client_eviction && CheckMemoryAfterCommand()) {
        done++;
        break;
      }
      if (session_.close_after_reply || blocked() ||
          out_.size() - out_sent_ >= kPauseReadingAt) {
        done++;
        break;
      }
    }
    server_.primary().FlushDataLinkBytes();  // the batch's writes: one chunk per data link
    if (done < n) parser_.Reset();  // its partial state belonged to a later request
    if (out_.size() - out_sent_ >= kPauseReadingAt) {
      reading_paused_ = true;
      break;
    }
  }
  if (batch_args_.capacity() > kKeepArgs) std::vector<std::string_view>().swap(batch_args_);
  parser_.ReleaseArgLists(kKeepArgs);
  // A client released from CLIENT PAUSE has run what it held (or was held again): the next
  // held client's turn, so that they run in the order they were held.
  if (resuming()) {
    bool was_locked = lock.owns_lock();
    if (!was_locked && !server_.LockUnlessBusy(lock)) {
      RetryAfterScript();  // the lock is the script's (maybe this very thread's)
    } else {
      if (!was_locked) server_.primary().HoldDataLinkBytes();
      server_.ResumedClientDone(*this);
    }
  }
  if (lock.owns_lock()) {
    server_.tracking().BroadcastPending();
    server_.InputDone(*this);
    server_.primary().ReleaseDataLinkBytes(&round_kicks.links);
    lock.unlock();
    KickDataLinksAfterRound();
    if (server_.aof().NeedsWrite()) PostAofRoundEnd();
  }
  in_pending_.store(in_.size() - std::min(in_.size(), parser_.BigBulkStart()),
                    std::memory_order_relaxed);
  in_cap_.store(in_.capacity(), std::memory_order_relaxed);
}

// REPLCONF rdma-resume from a replica whose snapshot comes over a data link: the rebuild of
// that link, whose answer the replica waits for on this connection (which carries no snapshot).
bool Client::IsDataLinkResume(std::span<const std::string_view> args) {
  return args.size() >= 2 && EqualsIgnoreCase(args[0], "replconf") &&
         EqualsIgnoreCase(args[1], "rdma-resume") && server_.primary().HasDataLink(this);
}

// A replica's connection carries no replies once it is one: over TCP its snapshot is written to
// the same socket, and a reply would land inside it. As Redis does, the reply is dropped and the
// replica disconnected (it will sync again): at once, by the Flush that follows its input, or
// by the posted close if output from before is still unwritten. Keyspace lock held.
void Client::DropReplicaThatGotAReply(std::span<const std::string_view> args, size_t reply_at) {
  out_.resize(reply_at);
  std::string error;
  const cmd::CommandSpec* spec = cmd::ResolveCommand(server_.commands(), args, &error);
  std::string name = spec ? spec->name : "<unknown>";  // a subcommand's is "parent|sub"
  LOG_WARNING("Replica generated a reply to command '%s', disconnecting it: %s", name.c_str(),
              Describe(MonoMs()).c_str());
  session_.close_after_reply = true;  // runs nothing more of its input
  RequestClose();
}

thread_local Client::RoundAof Client::round_aof;

void Client::InitThreadState() {
  round_kicks.posted = false;
  round_aof.posted = false;
  round_flush.posted = false;
}

// Posted once per round on this thread's loop: runs after the round's events, so one write (and
// under appendfsync always one fsync) covers every client the round served.
void Client::PostAofRoundEnd() {
  if (round_aof.posted) return;
  round_aof.posted = true;
  group_.loop().Post([&group = group_, &server = server_] {
    round_aof.posted = false;
    std::vector<uint64_t> waiting;
    waiting.swap(round_aof.waiting);
    server.aof().WriteBuffer();
    for (uint64_t id : waiting) {
      Client* c = group.Find(id);
      if (c == nullptr || c->closed_) continue;
      c->aof_held_ = false;
      if (c->Flush()) c->UpdateInterest();
    }
  });
}

bool Client::Flush() {
  // No reply goes out before the writes it follows are in the AOF (on disk, under always).
  if (out_sent_ < out_.size() &&
      aof_offset_.load(std::memory_order_relaxed) > server_.aof().reply_offset()) {
    if (!aof_held_) {
      aof_held_ = true;
      round_aof.waiting.push_back(id());
    }
    PostAofRoundEnd();
    return true;
  }
  if (OverNormalOutputLimit()) {
    LogOverLimit();
    Close("output buffer limit");
    return false;
  }
  NoteReplyPeak();
  while (out_sent_ < out_.size()) {
    ssize_t n = SockWrite(out_.data() + out_sent_, out_.size() - out_sent_);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) break;
      Close(std::string("write error: ") + strerror(errno));
      return false;
    }
    out_sent_ += static_cast<size_t>(n);
    server_.stats().net_output_bytes.Add(static_cast<uint64_t>(n));
  }
  if (out_sent_ == out_.size()) {
    ResetOutput();
    if (session_.close_after_reply) {
      Close("closed after reply");
      return false;
    }
  } else if (out_sent_ > 1024 * 1024 && out_sent_ * 2 > out_.size()) {
    out_.erase(0, out_sent_);
    out_sent_ = 0;
  }
  out_pending_.store(out_.size() - out_sent_, std::memory_order_relaxed);
  out_cap_.store(out_.capacity(), std::memory_order_relaxed);
  // A replica's stream follows the replies queued before it (+CONTINUE), and its snapshot.
  if (stream_.valid() && out_.empty() && !relay_.valid()) return FlushStream();
  return true;
}

void Client::UpdateInterest() {
  NoteMemory();  // maxmemory-clients: the figure after this round of IO
  // Replies held for the AOF go out from the round's end, not on EPOLLOUT.
  // A TLS write that needs the socket readable waits for EPOLLIN, not EPOLLOUT (OnEvents).
  bool tls_blocked = tls_ && tls_->write_wants_read();
  bool need_write = ((out_sent_ < out_.size() && !aof_held_) || StreamPending()) && !tls_blocked;
  need_write = need_write || TlsWantsWrite();
  if (relay_.valid()) UpdateRelay();
  uint32_t ev = (reading_paused_ ? 0 : net::EventLoop::kReadable) |
                (need_write ? net::EventLoop::kWritable : 0);
  if (need_write == want_write_ && !reading_paused_ && ev_reading_) return;
  group_.loop().ModifyFd(fd_.get(), ev, this);
  want_write_ = need_write;
  ev_reading_ = !reading_paused_;
}

bool Client::Push(std::string_view data, size_t hard_limit, size_t soft_limit,
                  int64_t soft_seconds) {
  std::lock_guard lock(push_mu_);
  if (close_requested_) return false;
  size_t pending = pushed_.size() + out_pending_.load(std::memory_order_relaxed) + data.size();
  net::OutputLimit limit{hard_limit, soft_limit, soft_seconds};
  if (limit.Exceeded(pending, MonoMs(), &over_soft_since_ms_)) {
    LogOverLimit();
    RequestCloseLocked();
    return false;
  }
  pushed_.append(data);
  SchedulePushedLocked();
  return true;
}

void Client::SchedulePushedLocked() {
  if (push_scheduled_) return;
  push_scheduled_ = true;
  PollGroup* g = &group_;
  uint64_t cid = id();
  g->loop().Post([g, cid] {
    if (Client* c = g->Find(cid)) c->DrainPushed();
  });
}

void Client::StartStream(repl::Backlog::Cursor from) {
  std::lock_guard lock(push_mu_);
  stream_sent_.store(from.offset(), std::memory_order_relaxed);
  pending_stream_ = std::move(from);
  SchedulePushedLocked();
}

void Client::StreamMore() {
  if (stream_wake_.exchange(true, std::memory_order_acq_rel)) return;
  PollGroup* g = &group_;
  uint64_t cid = id();
  g->loop().Post([g, cid] {
    Client* c = g->Find(cid);
    if (c == nullptr) return;
    c->stream_wake_.store(false, std::memory_order_release);
    if (!c->closed_ && c->Flush()) c->UpdateInterest();
  });
}

bool Client::FlushStream() {
  for (std::string_view s = stream_.Readable(); !s.empty(); s = stream_.Readable()) {
    ssize_t n = SockWrite(s.data(), s.size());
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) break;
      Close(std::string("write error: ") + strerror(errno));
      return false;
    }
    stream_.Consume(static_cast<size_t>(n));
    server_.stats().net_output_bytes.Add(static_cast<uint64_t>(n));
  }
  stream_sent_.store(stream_.offset(), std::memory_order_relaxed);
  return true;
}

// client-output-buffer-limit normal, for Redis' normal class (not a replica, the primary, or a
// pub/sub subscriber: those have limits of their own, or none), and the tighter limit of a
// client yet to authenticate. A client whose unsent replies pass it is closed before any more of them is written, as Redis closes it when it adds the
// reply. Own thread.
bool Client::OverNormalOutputLimit() {
  if ((flags_ & (kMaster | kReplica)) || subscriptions() > 0) return false;
  if (!session_.authenticated && out_.size() - out_sent_ > kUnauthenticatedOutputLimit) {
    return true;
  }
  net::OutputLimit limit = server_.normal_limits();
  if (!limit.hard && !limit.soft) return false;
  return limit.Exceeded(out_.size() - out_sent_, MonoMs(), &over_normal_soft_since_ms_);
}

void Client::LogOverLimit() const {
  LOG_WARNING("Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output "
              "buffer limits.", static_cast<unsigned long long>(id()), peer_.c_str());
}

void Client::AnswerWait(int64_t replicas) {
  std::string reply;
  resp::ReplyWriter(&reply, session_.resp).Int(replicas);
  server_.CountUnblocked(*this, false);
  server_.CompleteBlocked(*this, reply);
}

void Client::InjectInput(std::string_view data) {
  char* tail = in_.WritableTail(data.size());
  memcpy(tail, data.data(), data.size());
  in_.Commit(data.size());
  NoteMasterPending();
}

void Client::RetryAfterScript() {
  if (retry_armed_) return;
  retry_armed_ = true;
  PollGroup* g = &group_;
  uint64_t cid = id();
  group_.loop().AddTimer(10, [g, cid] {
    if (Client* c = g->Find(cid)) {
      c->retry_armed_ = false;
      c->ResumeInput();
    }
    return int64_t{-1};
  });
}

void Client::ResumeInput() {
  if (closed_ || blocked()) return;
  ProcessInput();
  if (closed_) return;
  if (Flush()) UpdateInterest();
}

bool Client::replies_silenced() const {
  return reply_skip_ || session_.reply_mode == cmd::ReplyMode::kOff;
}

void Client::CheckpointReplies() {
  if (flags_ & kMaster) {
    out_.resize(reply_mark_);  // the primary gets no replies, pushes included
  } else if (replies_silenced() && out_.size() > reply_mark_) {
    size_t end = reply_mark_;
    for (auto [at, len] : push_spans_) {
      if (at < end || at + len > out_.size()) continue;   // not where it was written: dropped
      memmove(out_.data() + end, out_.data() + at, len);  // at >= end: moves left
      end += len;
    }
    out_.resize(end);
  }
  StartReplies();
}

void Client::AppendPush(std::string_view frame) {
  push_spans_.emplace_back(out_.size(), frame.size());
  out_.append(frame);
}

void Client::TakePushed() {
  // What another thread pushed before this input was read (a message, an invalidation) goes
  // ahead of the replies to it; the posted DrainPushed finds the rest.
  std::lock_guard lock(push_mu_);
  if (pushed_.empty()) return;
  out_.append(pushed_);
  pushed_.clear();
}

void Client::DrainPushed() {
  {
    std::lock_guard lock(push_mu_);
    out_.append(pushed_);
    if (pushed_.capacity() > kKeepPushBuffer)
      std::string().swap(pushed_);
    else
      pushed_.clear();
    push_scheduled_ = false;
    if (pending_stream_.valid()) stream_ = std::move(pending_stream_);
    if (relay_pending_.valid()) relay_ = std::move(relay_pending_);
  }
  if (closed_) return;
  if (Flush()) UpdateInterest();
}

void Client::RequestClose() {
  std::lock_guard lock(push_mu_);
  RequestCloseLocked();
}

void Client::Kill() {
  ::shutdown(fd_.get(), SHUT_RDWR);
  RequestClose();
}

void Client::RequestCloseLocked() {
  if (close_requested_) return;
  close_requested_ = true;
  PollGroup* g = &group_;
  uint64_t cid = id();
  g->loop().Post([g, cid] {
    if (Client* c = g->Find(cid)) c->Close("killed by CLIENT KILL");
  });
}

std::string Client::Describe(int64_t now_mono_ms) const {
  std::string flags;
  if (flags_ & kMaster) flags += 'M';
  if (flags_ & kReplica) flags += 'S';
  if (flags_ & kMonitor) flags += 'O';
  if (flags_ & kPubSub) flags += 'P';
  if (flags_ & kMulti) flags += 'x';
  if (blocked() || paused()) flags += 'b';
  if (tracking_.on) flags += 't';
  if (tracking_.broken_redirect) flags += 'R';
  if (tracking_.bcast) flags += 'B';
  if (session_.close_after_reply) flags += 'c';
  if (close_requested_) flags += 'A';
  if (unix_socket_) flags += 'U';
  if (session_.no_evict) flags += 'e';
  if (flags.empty()) flags.push_back('N');  // GCC 12 -Wrestrict bug
  // The client asking (CLIENT LIST, CLIENT INFO) sees its own buffer as it is now, this
  // command still in it, as Redis shows it; the others as their threads last left it.
  bool self = server_.running_client() == this;
  size_t qbuf = self ? in_.size() : in_pending_.load(std::memory_order_relaxed);
  size_t omem = out_pending_.load(std::memory_order_relaxed);
  size_t qcap = self ? in_.capacity() : in_cap_.load(std::memory_order_relaxed);
  size_t rbs = self ? rb_size_ : rbs_.load(std::memory_order_relaxed);
  size_t rbp = self ? rb_peak_ : rbp_.load(std::memory_order_relaxed);
  // The running command's arguments, as Redis counts its argv: their bytes (argv-mem), and a
  // pointer each more in tot-mem.
  auto args = server_.executing_args(this);
  size_t argv_mem = 0;
  for (auto a : args) argv_mem += a.size();
  size_t tot_mem = MemoryUsage() + argv_mem + sizeof(void*) * args.size();
  char buf[1024];
  snprintf(buf, sizeof(buf),
           "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%zu "
           "psub=%zu ssub=%zu multi=%lld qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu "
           "rbs=%zu rbp=%zu obl=0 oll=0 omem=%zu tot-mem=%zu events=r%s cmd=%s user=%s "
           "redir=%lld resp=%d lib-name=%s lib-ver=%s",
           static_cast<unsigned long long>(session_.id), peer_.c_str(), local_.c_str(), fd_.get(),
           session_.name.c_str(), static_cast<long long>((now_mono_ms - created_ms_) / 1000),
           static_cast<long long>((now_mono_ms - last_interaction_ms()) / 1000), flags.c_str(),
           session_.db, channels_.size(), patterns_.size(), shard_channels_.size(),
           (flags_ & kMulti) ? static_cast<long long>(tx_.queued.size() + tx_.executing) : -1LL,
           qbuf, qcap > qbuf ? qcap - qbuf : 0, argv_mem, MultiMemory(), rbs, rbp, omem, tot_mem,
           omem ? "w" : "", last_cmd_ ? last_cmd_->c_str() : "NULL", session_.user.c_str(),
           tracking_.on ? static_cast<long long>(tracking_.redirect) : -1LL, session_.resp,
           session_.lib_name.c_str(), session_.lib_ver.c_str());
  return buf;
}

}  // namespace kv::server
