// The RDMA data plane of a replication link (the hybrid link): the TCP connection keeps the
// handshake, ACKs and errors; the snapshot and then the live stream move through a
// transport::StreamSender / StreamReceiver pair (libfabric one-sided writes into the replica's
// registered ring, or plain sockets with the same API). docs/replication-rdma.md is the spec.
//
// One data link carries one stream per connection: on a full resync, the RDB bytes followed by
// the replication stream from the FULLRESYNC offset on; on a partial one, the stream from the
// PSYNC offset on. Offsets and ACKs stay those of the replication stream, so WAIT, lag and
// PSYNC behave exactly as over TCP. A link that fails is not repaired in place: the replica
// drops the connection and comes back with PSYNC, which resumes from the offset it reached.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/status.h"
#include "transport/channel.h"

namespace kv::server {

std::string HexEncode(std::string_view bytes);
bool HexDecode(std::string_view hex, std::string* out);

// Options for data links from the server configuration (repl-rdma-provider, ...).
transport::ChannelOptions DataLinkOptions(const std::string& provider);

// The primary's end for one replica: a thread that connects the sender, then sends the snapshot
// (read from `snapshot_fd` until EOF, when given) and everything enqueued, in order.
class DataLinkSender {
 public:
  // Creates the sender and its setup blob (*local_blob, to send to the replica).
  static Result<std::unique_ptr<DataLinkSender>> Create(const transport::ChannelOptions& opts,
                                                        std::string* local_blob);
  ~DataLinkSender();

  // Starts the thread: Connect(peer_blob), then the pump.
  void Start(std::string peer_blob);
  // The snapshot producer's pipe (read end; owned from here on). Before any Enqueue of stream
  // bytes that must follow the snapshot.
  void SetSnapshotFd(int fd);
  // A disk-based sync: a snapshot file will follow (SetSnapshotFile) once it is saved; stream
  // bytes enqueued meanwhile wait behind it. Before any Enqueue of such bytes.
  void ExpectSnapshotFile();
  // The saved snapshot: the thread maps it and writes it straight from the mapping.
  void SetSnapshotFile(std::string path);
  // Stream bytes. Any thread.
  void Enqueue(std::string_view bytes);
  // Tears the link down (DEBUG, shutdown). Any thread.
  void Break();

  bool failed() const { return failed_.load(); }
  std::string error() const;
  std::string Describe() const;  // "fabric/tcp chunk=... credits=... bytes=..."

 private:
  explicit DataLinkSender(std::unique_ptr<transport::StreamSender> s) : sender_(std::move(s)) {}
  void Run(std::string peer_blob);
  Status SendBytes(std::string_view data);
  Status SendFile(const std::string& path);
  // Waits for a credit (or for Break()), failing after kIoTimeoutMs without progress.
  Status AwaitCredit(int64_t* last_progress_ms);

  std::unique_ptr<transport::StreamSender> sender_;
  std::thread thread_;
  mutable std::mutex mu_;
  transport::WaitInterrupt wake_;  // Enqueue(), SetSnapshotFd() and Break() wake the thread
  std::deque<std::string> queue_;  // guarded by mu_
  int snapshot_fd_ = -1;           // guarded by mu_
  bool snapshot_file_expected_ = false;  // guarded by mu_
  std::string snapshot_file_;            // guarded by mu_
  bool stop_ = false;              // guarded by mu_
  std::string error_;              // guarded by mu_
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint32_t> chunk_{0};
  std::string describe_;
  uint32_t credits_ = 0;
};

}  // namespace kv::server
