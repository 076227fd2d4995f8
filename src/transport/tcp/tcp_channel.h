// The plain-socket channel: the fallback when no fabric is available and the baseline the
// benchmarks compare against. Same API and semantics as the fabric channel, over one TCP
// connection: sender -> receiver carries 32-byte chunk headers (ControlMsg kChunk / kFin)
// followed by the chunk's bytes; receiver -> sender carries kCredit messages whose offset is the
// consumed offset (acknowledgements). Flow control is TCP's own window plus the receiver's ring
// (credits x max_chunk bytes), which it reads into only when there is room.
#pragma once

#include <string>
#include <vector>

#include "net/socket.h"
#include "transport/channel.h"
#include "transport/wire.h"

namespace kv::transport::tcp {

class TcpSender final : public StreamSender {
 public:
  explicit TcpSender(const ChannelOptions& opts);

  Result<std::string> LocalBlob() override;
  Status Connect(std::string_view peer_blob) override;
  Result<int> Progress() override;
  void WaitFds(std::vector<pollfd>* out) const override;
  void Close() override;
  std::string Describe() const override { return "tcp"; }

  std::span<uint8_t> Reserve() override;
  Status Commit(size_t n) override;
  Status Finish() override;
  uint64_t start_offset() const override { return start_offset_; }
  uint64_t committed_offset() const override { return committed_; }
  uint64_t acked_offset() const override { return acked_; }
  bool Drained() const override { return fin_queued_ && !Pending() && acked_ == committed_; }

 private:
  Result<int> Flush();
  Result<int> ReadAcks();
  bool Pending() const { return hdr_sent_ < hdr_.size() || payload_left_ > 0; }

  net::Fd fd_;
  std::vector<uint8_t> staging_;
  std::string hdr_;        // header being sent
  size_t hdr_sent_ = 0;
  const uint8_t* payload_ = nullptr;
  size_t payload_left_ = 0;
  uint8_t in_[kControlMsgSize];
  size_t in_got_ = 0;
  uint64_t link_id_ = 0;
  uint64_t start_offset_ = 0, committed_ = 0, acked_ = 0;
  bool finishing_ = false, fin_queued_ = false;
  int64_t last_event_ms_ = 0;
};

class TcpReceiver final : public StreamReceiver {
 public:
  TcpReceiver(const ChannelOptions& opts, uint64_t resume_offset);

  Result<std::string> LocalBlob() override;
  Status Connect(std::string_view peer_blob) override;
  Result<int> Progress() override;
  void WaitFds(std::vector<pollfd>* out) const override;
  void Close() override;
  std::string Describe() const override { return "tcp"; }

  std::span<const uint8_t> Peek() override;
  Status Consume(size_t n) override;
  bool eof() const override { return fin_ && head_ == tail_; }
  uint64_t consumed_offset() const override { return head_; }

 private:
  Status OnHeader();
  Status SendAcks();

  net::Fd listen_fd_;
  net::Fd fd_;
  std::vector<uint8_t> ring_;
  uint64_t head_, tail_;  // consumed and received stream offsets; tail - head <= ring size
  uint8_t hdr_[kControlMsgSize];
  size_t hdr_got_ = 0;
  size_t payload_left_ = 0;
  uint64_t acked_;  // last offset acknowledged to the sender
  std::string out_;  // acknowledgements not yet written
  uint64_t link_id_ = 0;
  bool fin_ = false;
};

}  // namespace kv::transport::tcp
