// The sizing of a client's query and reply buffers, as Redis' clientsCron does it
// (clientsCronResizeQueryBuffer, clientsCronResizeOutputBuffer): each poll group's cron visits
// its clients every 1000/hz ms (PollGroup::StartClientsCron).
//
// The query buffer (in_) keeps the room the last reads made: given back once the client has
// been idle over two seconds, or cut down to the latest peak of its use when it is over twice
// that and over 32 KiB. The reply buffer is the room out_ keeps between replies (rb_size_,
// 16 KiB at first, as Redis' per-client reply buffer): it shrinks to what the replies used
// (at least 1 KiB) once the peak, reset every five seconds, is under half of it, and doubles
// up to 16 KiB while replies fill it. CLIENT LIST shows both (qbuf and qbuf-free, rbs and
// rbp); DEBUG REPLYBUFFER sets the peak's reset time and turns the resizing off.
#include <algorithm>

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
}  // namespace

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

}  // namespace kv::server
