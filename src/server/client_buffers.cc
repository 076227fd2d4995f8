// The sizing of a client's query and reply buffers: the reads that fill the query buffer
// (ReadInput), and the cron's resizing, as Redis' clientsCron does it
// (clientsCronResizeQueryBuffer, clientsCronResizeOutputBuffer): each poll group's cron visits
// its clients every 1000/hz ms (PollGroup::StartClientsCron).
//
// The query buffer (in_) keeps the room the last reads made: given back once the client has
// been idle over two seconds, or cut down to the latest peak of its use when it is over twice
// that and over 32 KiB. The reply buffer is the room out_ keeps between replies (rb_size_,
// 16 KiB at first, as Redis' per-client reply buffer): it shrinks to what the replies used
// (at least 1 KiB) once the peak, reset every five seconds, is under half of it, and doubles
// up to 16 KiB while replies fill it. CLIENT LIST shows both (qbuf and qbuf-free, rbs and
// rbp); DEBUG REPLYBUFFER sets the peak's reset time and turns the resizing off. The cron
// also closes a client whose output stayed over its soft limit past the limit's seconds, as
// Redis' clientsCron does, whether or not more output came meanwhile.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/clock.h"
#include "common/logging.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {

namespace {
// Redis' PROTO_RESIZE_THRESHOLD: a query buffer over this is cut down to its recent peak.
constexpr size_t kQueryResizeThreshold = 32 * 1024;
// A query buffer is resized only when it would give back more than this.
constexpr size_t kQueryWasteWorthResizing = 4 * 1024;
// Redis' PROTO_REPLY_MIN_BYTES: the smallest reply buffer.
constexpr size_t kReplyMinBytes = 1024;
// Redis' PROTO_MBULK_BIG_ARG: a request this big gets a query buffer of its own size.
constexpr size_t kBigArg = 32 * 1024;
}  // namespace

Client::ReadResult Client::ReadInput() {
  // Big bulk arguments are read in few calls, but the buffer only doubles per read, so a peer
  // that declares a huge length and sends nothing cannot make the server reserve it up front.
  // While a big argument's bytes keep filling the room, the reads go on now (as Redis reads a
  // big argument whole): CLIENT LIST and client eviction see what the peer has sent.
  ReadResult result = ReadResult::kNothing;
  for (;;) {
    size_t want = kReadChunk;
    size_t needed = parser_.BytesWanted();
    if (needed > in_.size()) {
      size_t rest = needed - in_.size();
      size_t grow_by = std::max(kReadChunk, in_.capacity());
      want = std::clamp(rest, kReadChunk, grow_by);
      // The growth that completes a big argument takes what it needs, not the next power of
      // two (Redis sizes a big argument's buffer to it): a client's memory is its arguments'.
      if (needed >= kBigArg && in_.tail_room() < rest && rest <= grow_by &&
          in_.Resize(in_.size() + rest)) {
        want = rest;
      }
    }
    char* tail = in_.WritableTail(want);
    if (!tail) {
      LOG_WARNING("Out of memory reading from client id=%llu addr=%s: closing it",
                  static_cast<unsigned long long>(id()), peer_.c_str());
      Close("out of memory");
      return ReadResult::kClosed;
    }
    size_t room = in_.tail_room();
    ssize_t n = SockRead(tail, room);
    if (n == 0) {
      Close("client closed connection");
      return ReadResult::kClosed;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return result;
      Close(std::string("read error: ") +
            (tls_ && !tls_->error().empty() ? tls_->error() : strerror(errno)));
      return ReadResult::kClosed;
    }
    in_.Commit(static_cast<size_t>(n));
    in_peak_ = std::max(in_peak_, in_.size());
    NoteMasterPending();
    server_.stats().net_input_bytes.Add(static_cast<uint64_t>(n));
    last_interaction_ms_.store(group_.loop().now_ms(), std::memory_order_relaxed);
    if (in_.size() > static_cast<size_t>(server_.query_buffer_limit())) {
      LOG_WARNING("Closing client that reached max query buffer length: id=%llu addr=%s qbuf=%zu",
                  static_cast<unsigned long long>(id()), peer_.c_str(), in_.size());
      Close("query buffer limit");
      return ReadResult::kClosed;
    }
    result = static_cast<size_t>(n) < room ? ReadResult::kDrained : ReadResult::kFilled;
    // Input OpenSSL already took from the socket is read now: no event would announce it.
    if (tls_ && tls_->HasPending()) continue;
    if (result == ReadResult::kDrained || parser_.BytesWanted() <= in_.size()) return result;
  }
}

void Client::ResetOutput() {
  out_sent_ = 0;
  // A big reply's room goes (as Redis frees its reply list once written); a reply buffer the
  // cron resized while replies were pending takes its new size now.
  if (out_.capacity() != rb_size_ && rb_size_ > 0) {
    std::string fresh;
    fresh.reserve(rb_size_);
    out_.swap(fresh);
  } else {
    out_.clear();
  }
}

void Client::CronBuffers(int64_t now_ms) {
  if (closed_) return;

  // The query buffer. Idle time in whole seconds, as Redis' unixtime - lastinteraction.
  size_t len = in_.size(), cap = in_.capacity();
  int64_t idle_s = now_ms / 1000 - last_interaction_ms() / 1000;
  if (cap - len > kQueryWasteWorthResizing) {
    if (idle_s > 2) {
      in_.Resize(len);
    } else if (cap > kQueryResizeThreshold && cap / 2 > in_peak_) {
      // Not below what the recent peak took, nor below the bulk argument being read.
      in_.Resize(std::max({len, in_peak_, parser_.BytesWanted()}));
    }
  }
  in_peak_ = std::max(len, parser_.BytesWanted());
  in_cap_.store(in_.capacity(), std::memory_order_relaxed);

  // The reply buffer.
  DebugState& debug = server_.debug_state();
  if (debug.reply_buffer_resizing.load(std::memory_order_relaxed)) {
    size_t resized = 0;
    if (rb_size_ / 2 >= kReplyMinBytes && rb_peak_ < rb_size_ / 2) {
      resized = std::max(kReplyMinBytes, rb_peak_ + 1);
      server_.stats().reply_buffer_shrinks.fetch_add(1, std::memory_order_relaxed);
    } else if (rb_size_ * 2 < kReplyChunk * 2 && rb_peak_ == rb_size_) {
      resized = std::min(kReplyChunk, rb_size_ * 2);
      server_.stats().reply_buffer_expands.fetch_add(1, std::memory_order_relaxed);
    }
    int64_t reset_ms = debug.reply_buffer_peak_reset_ms.load(std::memory_order_relaxed);
    if (reset_ms >= 0 && now_ms - rb_peak_reset_ms_ >= reset_ms) {
      rb_peak_ = std::min(out_.size(), rb_size_);  // what the buffer holds now (Redis' bufpos)
      rb_peak_reset_ms_ = now_ms;
    }
    if (resized != 0) {
      rb_size_ = resized;
      rb_peak_ = std::min(rb_peak_, rb_size_);
      if (out_.empty()) ResetOutput();  // else once the pending replies are written
      out_cap_.store(out_.capacity(), std::memory_order_relaxed);
    }
  }
  rbs_.store(rb_size_, std::memory_order_relaxed);
  rbp_.store(rb_peak_, std::memory_order_relaxed);
}

bool Client::CronOverOutputLimit() {
  if (closed_ || (flags_ & (kMaster | kReplica))) return false;
  if (subscriptions() == 0) return OverNormalOutputLimit();
  std::lock_guard lock(push_mu_);
  size_t pending = pushed_.size() + (out_.size() - out_sent_);
  if (pending == 0) {
    over_soft_since_ms_ = 0;
    return false;
  }
  return server_.pubsub_limits().Exceeded(pending, MonoMs(), &over_soft_since_ms_);
}

}  // namespace kv::server
