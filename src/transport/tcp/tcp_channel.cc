#include "transport/tcp/tcp_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "common/clock.h"

namespace kv::transport::tcp {

namespace {

// Reads one whole blob's fields, checking transport and role.
Result<Blob> DecodePeer(std::string_view text, const char* role) {
  auto b = Blob::Decode(text);
  if (!b.ok()) return b.status();
  auto t = b->Get("transport");
  auto r = b->Get("role");
  if (!t.ok() || *t != "tcp") return Status::Invalid("peer is not a tcp channel endpoint");
  if (!r.ok() || *r != role) return Status::Invalid("peer has the wrong role");
  return b;
}

bool WouldBlock(int e) { return e == EAGAIN || e == EWOULDBLOCK || e == EINTR; }

// Bytes moved per Progress() call at most, so one busy link cannot starve a loop.
constexpr size_t kMaxBytesPerPoll = 4 << 20;

}  // namespace

// ---- sender ----

TcpSender::TcpSender(const ChannelOptions& opts) : StreamSender(opts) {}

Result<std::string> TcpSender::LocalBlob() {
  Blob b;
  b.Set("transport", "tcp");
  b.Set("role", "sender");
  return b.Encode();
}

Status TcpSender::Connect(std::string_view peer_blob) {
  auto b = DecodePeer(peer_blob, "receiver");
  if (!b.ok()) return Fail(b.status());
  auto host = b->Get("host");
  auto port = b->GetU64("port");
  auto id = b->GetU64("link_id");
  auto off = b->GetU64("offset");
  for (const Status* s : {&host.status(), &port.status(), &id.status(), &off.status()}) {
    if (!s->ok()) return Fail(*s);
  }
  if (*port == 0 || *port > 65535) return Fail(Status::Corruption("bad port in setup blob"));
  auto fd = net::ConnectTcp(*host, static_cast<int>(*port), opts_.connect_timeout_ms);
  if (!fd.ok()) return Fail(fd.status());
  fd_ = std::move(*fd);
  link_id_ = *id;
  // The hello proves to the listener that this connection belongs to its link.
  if (::send(fd_.get(), &link_id_, 8, MSG_NOSIGNAL) != 8) {
    return Fail(Status::FromErrno("tcp channel hello", errno));
  }
  if (Status s = net::SetNonBlocking(fd_.get()); !s.ok()) return Fail(s);
  net::SetNoDelay(fd_.get());
  start_offset_ = committed_ = acked_ = *off;
  staging_.resize(opts_.max_chunk);
  last_event_ms_ = MonoMs();
  UseSleepingPolls();
  return Status::Ok();
}

std::span<uint8_t> TcpSender::Reserve() {
  if (!status_.ok() || !fd_.valid() || finishing_ || Pending()) return {};
  // The same window as the fabric channel: never more unacknowledged bytes than the
  // receiver's ring holds (which also bounds what a resume must resend).
  uint64_t window = uint64_t{opts_.credits} * opts_.max_chunk;
  uint64_t room = window - std::min(window, committed_ - acked_);
  if (room == 0) return {};
  return {staging_.data(), std::min<size_t>(staging_.size(), room)};
}

Status TcpSender::Commit(size_t n) {
  if (!status_.ok()) return status_;
  if (!fd_.valid() || finishing_ || Pending() || n == 0 || n > Reserve().size()) {
    return Status::Invalid("Commit without a reservation");
  }
  hdr_.assign(kControlMsgSize, '\0');
  EncodeControl({MsgType::kChunk, 0, static_cast<uint32_t>(n), 0, committed_, link_id_},
                reinterpret_cast<uint8_t*>(hdr_.data()));
  hdr_sent_ = 0;
  payload_ = staging_.data();
  payload_left_ = n;
  committed_ += n;
  ++stats_.chunks;
  stats_.bytes += n;
  if (auto r = Flush(); !r.ok()) return r.status();
  return Status::Ok();
}

Status TcpSender::Finish() {
  if (!status_.ok()) return status_;
  finishing_ = true;
  if (auto r = Flush(); !r.ok()) return r.status();
  return Status::Ok();
}

// Writes the pending header and payload; queues the end marker once they are out.
Result<int> TcpSender::Flush() {
  int events = 0;
  size_t budget = kMaxBytesPerPoll;
  for (;;) {
    if (!Pending()) {
      if (!finishing_ || fin_queued_) return events;
      // Everything before it is out: now the end marker.
      hdr_.assign(kControlMsgSize, '\0');
      EncodeControl({MsgType::kFin, 0, 0, 0, committed_, link_id_},
                    reinterpret_cast<uint8_t*>(hdr_.data()));
      hdr_sent_ = 0;
      fin_queued_ = true;
    }
    if (budget == 0) return events;
    iovec iov[2];
    int cnt = 0;
    if (hdr_sent_ < hdr_.size()) iov[cnt++] = {hdr_.data() + hdr_sent_, hdr_.size() - hdr_sent_};
    if (payload_left_ > 0) iov[cnt++] = {const_cast<uint8_t*>(payload_), payload_left_};
    msghdr mh{};
    mh.msg_iov = iov;
    mh.msg_iovlen = cnt;
    ssize_t n = ::sendmsg(fd_.get(), &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (WouldBlock(errno)) return events;
      return Fail(Status(Code::kClosed, std::string("tcp channel send: ") + strerror(errno)));
    }
    ++events;
    budget -= std::min(budget, static_cast<size_t>(n));
    size_t h = std::min(static_cast<size_t>(n), hdr_.size() - hdr_sent_);
    hdr_sent_ += h;
    payload_ += n - h;
    payload_left_ -= n - h;
  }
}

Result<int> TcpSender::ReadAcks() {
  int events = 0;
  for (;;) {
    ssize_t n = ::recv(fd_.get(), in_ + in_got_, kControlMsgSize - in_got_, MSG_DONTWAIT);
    if (n == 0) {
      if (finishing_ && acked_ == committed_) return events;
      return Fail(Status::Closed("tcp channel peer closed the connection"));
    }
    if (n < 0) {
      if (WouldBlock(errno)) return events;
      return Fail(Status(Code::kClosed, std::string("tcp channel recv: ") + strerror(errno)));
    }
    in_got_ += n;
    if (in_got_ < kControlMsgSize) continue;
    in_got_ = 0;
    ++events;
    auto m = DecodeControl({in_, kControlMsgSize}, link_id_);
    if (!m.ok()) return Fail(m.status());
    if (m->type == MsgType::kError) return Fail(Status::Closed("peer closed the link with error"));
    if (m->type != MsgType::kCredit) return Fail(Status::Corruption("receiver sent a non-ack"));
    if (m->offset < acked_ || m->offset > committed_) {
      return Fail(Status::Corruption("ack for offset " + std::to_string(m->offset) +
                                     " outside what was sent"));
    }
    acked_ = m->offset;
  }
}

Result<int> TcpSender::Progress() {
  if (!status_.ok()) return status_;
  if (!fd_.valid()) return Fail(Status::Invalid("Progress before Connect"));
  auto w = Flush();
  if (!w.ok()) return w;
  auto r = ReadAcks();
  if (!r.ok()) return r;
  int events = *w + *r;
  int64_t now = MonoMs();
  bool waiting = Pending() || acked_ < committed_;
  if (events > 0 || !waiting) {
    last_event_ms_ = now;
  } else if (now - last_event_ms_ > opts_.stall_timeout_ms) {
    return Fail(Status::Closed("tcp channel peer stalled for " +
                               std::to_string(now - last_event_ms_) + " ms"));
  }
  return events;
}

void TcpSender::WaitFds(std::vector<pollfd>* out) const {
  if (!fd_.valid()) return;
  out->push_back({fd_.get(), static_cast<short>(POLLIN | (Pending() ? POLLOUT : 0)), 0});
}

void TcpSender::Close() {
  Fail(Status::Closed("link closed locally"));
  fd_.Reset();
}

// ---- receiver ----

TcpReceiver::TcpReceiver(const ChannelOptions& opts, uint64_t resume_offset)
    : StreamReceiver(opts), head_(resume_offset), tail_(resume_offset), acked_(resume_offset) {}

Result<std::string> TcpReceiver::LocalBlob() {
  if (!listen_fd_.valid()) {
    auto l = net::ListenTcp(opts_.bind_addr, 0, 4);
    if (!l.ok()) return Fail(l.status());
    listen_fd_ = std::move(*l);
    std::random_device rd;
    link_id_ = (uint64_t{rd()} << 32 | rd()) | 1;
  }
  Blob b;
  b.Set("transport", "tcp");
  b.Set("role", "receiver");
  b.Set("host", opts_.bind_addr);
  b.SetU64("port", net::LocalPort(listen_fd_.get()));
  b.SetU64("link_id", link_id_);
  b.SetU64("offset", head_);
  return b.Encode();
}

Status TcpReceiver::Connect(std::string_view peer_blob) {
  if (!listen_fd_.valid()) {
    if (auto b = LocalBlob(); !b.ok()) return b.status();
  }
  if (auto b = DecodePeer(peer_blob, "sender"); !b.ok()) return Fail(b.status());
  int64_t deadline = MonoMs() + opts_.connect_timeout_ms;
  while (!fd_.valid()) {
    int64_t left = deadline - MonoMs();
    if (left <= 0) return Fail(Status::Closed("tcp channel: no connection from the sender"));
    pollfd p{listen_fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    auto c = net::AcceptTcp(listen_fd_.get());
    if (!c.ok()) continue;
    // Read the 8-byte hello (blocking briefly) and drop connections of other links.
    pollfd q{c->get(), POLLIN, 0};
    uint64_t id = 0;
    if (::poll(&q, 1, static_cast<int>(std::max<int64_t>(left, 1))) == 1 &&
        ::recv(c->get(), &id, 8, MSG_WAITALL) == 8 && id == link_id_) {
      fd_ = std::move(*c);
    }
  }
  listen_fd_.Reset();
  if (Status s = net::SetNonBlocking(fd_.get()); !s.ok()) return Fail(s);
  net::SetNoDelay(fd_.get());
  ring_.resize(size_t{opts_.credits} * opts_.max_chunk);
  UseSleepingPolls();
  return Status::Ok();
}

Status TcpReceiver::OnHeader() {
  auto m = DecodeControl({hdr_, kControlMsgSize}, link_id_);
  if (!m.ok()) return m.status();
  if (fin_) return Status::Corruption("data after end of stream");
  if (m->offset != tail_) {
    return Status::Corruption("chunk at offset " + std::to_string(m->offset) + ", expected " +
                              std::to_string(tail_));
  }
  if (m->type == MsgType::kFin) {
    fin_ = true;
    return Status::Ok();
  }
  if (m->type != MsgType::kChunk) return Status::Corruption("sender sent a non-chunk message");
  if (m->length == 0 || m->length > opts_.max_chunk) {
    return Status::Corruption("chunk length " + std::to_string(m->length) + " out of range");
  }
  payload_left_ = m->length;
  return Status::Ok();
}

Result<int> TcpReceiver::Progress() {
  if (!status_.ok()) return status_;
  if (!fd_.valid()) return Fail(Status::Invalid("Progress before Connect"));
  int events = 0;
  size_t budget = kMaxBytesPerPoll;
  while (budget > 0) {
    uint8_t* dst;
    size_t want;
    if (payload_left_ == 0) {
      dst = hdr_ + hdr_got_;
      want = kControlMsgSize - hdr_got_;
    } else {
      size_t room = ring_.size() - (tail_ - head_);
      size_t pos = tail_ % ring_.size();
      want = std::min({room, ring_.size() - pos, payload_left_});
      if (want == 0) break;  // ring full: TCP's window holds the sender back
      dst = ring_.data() + pos;
    }
    ssize_t n = ::recv(fd_.get(), dst, want, MSG_DONTWAIT);
    if (n == 0) {
      if (fin_) break;
      return Fail(Status::Closed("tcp channel peer closed the connection"));
    }
    if (n < 0) {
      if (WouldBlock(errno)) break;
      return Fail(Status(Code::kClosed, std::string("tcp channel recv: ") + strerror(errno)));
    }
    ++events;
    budget -= std::min(budget, static_cast<size_t>(n));
    if (payload_left_ > 0) {
      tail_ += n;
      payload_left_ -= n;
    } else if ((hdr_got_ += n) == kControlMsgSize) {
      hdr_got_ = 0;
      if (Status s = OnHeader(); !s.ok()) return Fail(s);
    }
  }
  if (Status s = SendAcks(); !s.ok()) return Fail(s);
  return events;
}

Status TcpReceiver::SendAcks() {
  while (!out_.empty()) {
    ssize_t n = ::send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (WouldBlock(errno)) return Status::Ok();
      return Status(Code::kClosed, std::string("tcp channel ack: ") + strerror(errno));
    }
    out_.erase(0, static_cast<size_t>(n));
  }
  return Status::Ok();
}

std::span<const uint8_t> TcpReceiver::Peek() {
  if (!status_.ok() || ring_.empty() || head_ == tail_) return {};
  size_t pos = head_ % ring_.size();
  return {ring_.data() + pos, std::min<size_t>(tail_ - head_, ring_.size() - pos)};
}

Status TcpReceiver::Consume(size_t n) {
  if (!status_.ok()) return status_;
  if (n > tail_ - head_) return Status::Invalid("Consume beyond the received bytes");
  head_ += n;
  // Acknowledge every max_chunk bytes, and whenever the consumer has caught up.
  if (head_ - acked_ >= opts_.max_chunk || (head_ == tail_ && head_ != acked_)) {
    uint8_t m[kControlMsgSize];
    EncodeControl({MsgType::kCredit, 0, 0, 0, head_, link_id_}, m);
    out_.append(reinterpret_cast<char*>(m), kControlMsgSize);
    acked_ = head_;
    if (Status s = SendAcks(); !s.ok()) return Fail(s);
  }
  return Status::Ok();
}

void TcpReceiver::WaitFds(std::vector<pollfd>* out) const {
  if (!fd_.valid()) return;
  out->push_back({fd_.get(), static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0});
}

void TcpReceiver::Close() {
  Fail(Status::Closed("link closed locally"));
  fd_.Reset();
}

}  // namespace kv::transport::tcp
