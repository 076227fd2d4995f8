// The RDMA data plane of a replication link (the hybrid link): the TCP connection keeps the
// handshake, ACKs and errors; the snapshot and then the live stream move through a
// transport::StreamSender / StreamReceiver pair (libfabric one-sided writes into the replica's
// registered ring, or plain sockets with the same API). docs/replication-rdma.md is the spec.
//
// One data link carries one stream per connection: on a full resync, the RDB bytes followed by
// the replication stream from the FULLRESYNC offset on; on a partial one, the stream from the
// PSYNC offset on. Offsets and ACKs stay those of the replication stream, so WAIT, lag and
// PSYNC behave exactly as over TCP. A link that fails while it streams is not repaired in
// place: the replica drops the connection and comes back with PSYNC, which resumes from the
// offset it reached. A link that fails while the snapshot is still being sent is rebuilt
// (REPLCONF rdma-resume) and the snapshot goes on from the replica's offset over the new link:
// from the snapshot child's ring, which keeps what the replica has not acknowledged yet; from a
// file, whose mapping the sender keeps until the whole file has been sent.
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
#include "net/socket.h"
#include "repl/datalink/snapshot_ring.h"
#include "transport/channel.h"

namespace kv::repl {

// Why a data link failed when DEBUG REPLICATION-BREAK-DATA-LINK broke it (either side).
inline constexpr const char* kDataLinkBrokenByDebug =
    "data link broken (DEBUG REPLICATION-BREAK-DATA-LINK)";

// Options for data links from the server configuration (repl-rdma-provider,
// repl-rdma-poll-mode, repl-rdma-doorbell).
transport::ChannelOptions DataLinkOptions(const std::string& provider,
                                          const std::string& poll_mode = "auto",
                                          bool doorbell = true);

// The primary's end for one replica: a thread that connects the sender, then sends the snapshot
// (from the snapshot child's ring or from the saved file) and everything enqueued, in order.
class DataLinkSender {
 public:
  // Creates the sender and its setup blob (*local_blob, to send to the replica).
  static Result<std::unique_ptr<DataLinkSender>> Create(const transport::ChannelOptions& opts,
                                                        std::string* local_blob);
  ~DataLinkSender();

  // Starts the thread: Connect(peer_blob), then the pump.
  void Start(std::string peer_blob);
  // The ring the snapshot child fills (diskless sync); the thread writes the snapshot to the
  // link straight from it. Before any Enqueue of stream bytes that must follow the snapshot.
  void SetSnapshotRing(std::unique_ptr<SnapshotRing> ring);
  // A disk-based sync: a snapshot file will follow (SetSnapshotFile) once it is saved; stream
  // bytes enqueued meanwhile wait behind it. Before any Enqueue of such bytes.
  void ExpectSnapshotFile();
  // The saved snapshot: opened here, at once (a later save may rename another file over its
  // name before the thread gets to it), then mapped by the thread and written straight from
  // the mapping.
  void SetSnapshotFile(const std::string& path);
  // Stream bytes. Any thread; calls are ordered by the caller (the keyspace lock). Once the
  // snapshot is behind, the thread leaves queued bytes to Kick().
  void Enqueue(std::string_view bytes);
  // Stream bytes enqueued and not yet written to the link: the replica's output buffer, for
  // client-output-buffer-limit replica. Any thread.
  uint64_t Unsent() const {
    uint64_t enqueued = enqueued_.load(), sent = stream_sent_.load();
    return enqueued > sent ? enqueued - sent : 0;
  }
  // Writes what is queued from the caller's thread, saving a thread hand-off per write, when
  // the link's thread is asleep; otherwise wakes it. Any thread, no lock needed: the primary
  // calls it after releasing the keyspace lock, so that the link's system calls do not hold up
  // the other threads' commands.
  void Kick();
  // Tears the link down (shutdown, a replica gone). Any thread.
  void Break();
  // Fails the link once `after` more bytes are sent (DEBUG REPLICATION-BREAK-DATA-LINK), as a
  // broken fabric would: a snapshot in progress can then be resumed. Any thread.
  void FailAfter(uint64_t after);
  // True when the link failed while the snapshot (from the ring or the file) was still being
  // sent, less than `grace_ms` ago: the replica may rebuild it with Resume().
  bool Resumable(int64_t grace_ms) const;
  // Rebuilds a failed link (see Resumable): a new sender with a new setup blob (*local_blob),
  // connected to `peer_blob` by the thread, which resends from the offset the replica names
  // and goes on with the snapshot and the stream. Keyspace lock (joins the old thread, which
  // has ended).
  Status Resume(std::string peer_blob, std::string* local_blob);

  bool failed() const { return failed_.load(); }
  // The snapshot child is done with this link's ring (wrote all of it, or failed): it is about
  // to exit. Any thread.
  bool RingFinished() const;
  // A disk-based sync's file is all sent and acknowledged by the replica. Any thread.
  bool SnapshotFileDelivered() const { return file_delivered_.load(); }
  std::string error() const;
  // "provider=...,poll=...,chunk=...,chunks=...,credits=...,bytes=..." for INFO.
  std::string Describe() const;

 private:
  DataLinkSender(std::unique_ptr<transport::StreamSender> s, const transport::ChannelOptions& o)
      : sender_(std::move(s)), opts_(o) {}
  void Run(std::string peer_blob);
  Status SendBytes(std::string_view data);
  // A diskless sync's snapshot: writes what the child puts in the ring, straight from the ring,
  // until the child is done; frees the ring's space as the replica acknowledges it.
  Status SendRing();
  // Writes what credits allow of `part` straight from `region` (bytes_ counts it), or waits
  // for a credit when there is none.
  Status WriteFromRegion(const transport::SourceRegion& region, std::span<const uint8_t> part,
                         int64_t* last_progress_ms);
  // Waits until no write posted from a source region is in flight (the region may go then);
  // fails with the link, or when the link is stopped.
  Status DrainRegionWrites();
  // Waits until the replica has acknowledged every byte before `end` (consumed them off its
  // ring); fails with the link, when it is stopped or broken on purpose, or after a stall.
  Status AwaitAcked(uint64_t end);
  // The largest piece of `part` that stops at the DEBUG failure point (FailAfter).
  std::span<const uint8_t> UpToFailurePoint(std::span<const uint8_t> part) const;
  // Resends what the new link's receiver has not got yet (after Resume).
  Status Replay();
  // A disk-based sync's snapshot file: MapFile maps it (at the current stream offset);
  // SendMapped writes what of it the replica has not got, straight from the mapping, and
  // unmaps it once it is all sent. A failure keeps the mapping for a rebuilt link.
  Status MapFile(const std::string& path, net::Fd fd);
  Status SendMapped();
  void UnmapFile();
  // Closed once the DEBUG failure point (FailAfter) is reached.
  Status DebugFailure() const;
  // Waits for a credit (or for Break()), failing after kIoTimeoutMs without progress.
  Status AwaitCredit(int64_t* last_progress_ms);
  bool Stopped() const;
  // The thread's sleep while the stream flows: on a wake-up (Enqueue, Kick) or the timeout
  // only, not on the link's completions (each write's and each credit's would wake it; Kick's
  // threads reap them instead), then one Progress() for what came meanwhile. Releases `io`
  // (io_mu_) while it sleeps.
  Status Doze(std::unique_lock<std::mutex>& io, int timeout_ms);
  // Publishes the link's counters for Describe() (whoever holds io_mu_).
  void NoteStats();
  // The stream flows and nothing stands in the way of Kick() (mu_).
  bool Kickable() const;
  // How many times one Kick() takes the queue (and WriteQueued writes it) before leaving what
  // others keep adding to the link's thread.
  static constexpr int kMaxKickPasses = 4;
  // Kick's work, under io_mu_: writes the queue until it is empty, out of credits (then the
  // rest goes back and the thread is woken to wait for them) or taken kMaxKickPasses times.
  void WriteQueued();

  std::unique_ptr<transport::StreamSender> sender_;
  transport::ChannelOptions opts_;
  std::thread thread_;
  mutable std::mutex mu_;
  transport::WaitInterrupt wake_;  // Enqueue, Kick, SetSnapshotRing and Break wake the thread
  std::deque<std::string> queue_;  // guarded by mu_
  bool streaming_ = false;         // guarded by mu_: the snapshot is behind (Kick may write)
  bool batch_in_flight_ = false;   // guarded by mu_: the thread is sending bytes it dequeued
  // Guards sender_: the thread holds it while awake (Link::Wait releases it while it sleeps),
  // Kick's thread while it writes.
  std::mutex io_mu_;
  // The diskless snapshot (set by SetSnapshotRing, guarded by mu_; its data read by the thread
  // only, and by Resume once the thread has ended). Kept until it is all sent, so that a
  // rebuilt link resends what the replica did not get from the ring.
  std::unique_ptr<SnapshotRing> ring_;
  uint64_t ring_base_ = 0;               // the stream offset of the ring's first byte (thread only)
  bool snapshot_file_expected_ = false;  // guarded by mu_
  std::string snapshot_file_;            // guarded by mu_
  net::Fd snapshot_fd_;                  // guarded by mu_: snapshot_file_, opened
  bool stop_ = false;                    // guarded by mu_
  std::string error_;                    // guarded by mu_
  std::atomic<bool> failed_{false};
  std::atomic<int64_t> failed_ms_{0};
  std::atomic<int64_t> fail_at_{-1};  // DEBUG: fail once bytes_ reaches this
  bool resuming_ = false;
  // The snapshot file being sent (thread only, and Resume once the thread has ended).
  struct MappedFile {
    const uint8_t* data = nullptr;
    size_t size = 0;
    uint64_t base = 0;  // the stream offset of its first byte
  } file_;
  std::atomic<bool> file_unsent_{false};  // file_ holds a mapping (Resumable reads it)
  std::atomic<bool> file_delivered_{false};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> enqueued_{0};     // stream bytes enqueued (Unsent)
  std::atomic<uint64_t> stream_sent_{0};  // of them, written to the link
  std::atomic<uint32_t> chunk_{0};
  std::atomic<bool> kick_requested_{false};  // a Kick() wants the queue written
  std::atomic<bool> kicking_{false};         // a Kick() holds io_mu_
  std::atomic<bool> long_doze_{false};       // the thread sleeps in Doze with nothing outstanding
  std::atomic<uint64_t> chunks_{0};          // chunks written, over every link this sender had
  uint64_t chunks_earlier_ = 0;              // chunks of the links before sender_ (io_mu_)
  std::string describe_;
  uint32_t credits_ = 0;
};

}  // namespace kv::repl
