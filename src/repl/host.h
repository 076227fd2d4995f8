// What replication needs from the server it runs in, and nothing more. Both sides reach the
// server only through these two interfaces, which `server/repl_host.cc` and `server/client.h`
// implement:
//
// - Host: the keyspace and its lock, the settings, the replica side's state as the primary side
//   sees it, the snapshot child's place among the server's children, the function libraries
//   and the AOF a full sync replaces, and the master client (the connection to the primary once
//   synced, which the server runs as a client whose commands apply without replies).
// - ClientConn: one client connection as the primary side sees it: a replica (or a connection
//   about to become one with PSYNC), or the client whose REPLCONF or WAIT runs.
//
// Every call is made with the keyspace lock (mu()) held, except where it says otherwise.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "net/event_loop.h"
#include "net/output_limit.h"
#include "net/socket.h"
#include "net/tls.h"
#include "persist/child_info.h"
#include "repl/backlog.h"
#include "store/keyspace.h"

namespace kv::repl {

class ClientConn {
 public:
  virtual ~ClientConn() = default;

  virtual uint64_t id() const = 0;
  // "ip:port", for log lines and the replica's address in INFO.
  virtual const std::string& peer() const = 0;
  // The socket: +FULLRESYNC and the snapshot child write it directly, unless it is TLS.
  virtual int fd() const = 0;
  // A TLS connection: the snapshot child cannot write into its session. Its +FULLRESYNC and
  // keepalives are queued with Send, and the child writes into a pipe whose bytes the
  // connection's loop sends on (RelayFrom).
  virtual bool tls() const = 0;
  // Queues bytes to go out after what is queued already (any thread, keyspace lock held).
  virtual void Send(std::string_view bytes) = 0;
  // What arrives on `fd` (a pipe's non-blocking read end) goes out after what is queued and
  // before the stream, until the pipe's end (any thread, keyspace lock held).
  virtual void RelayFrom(net::Fd fd) = 0;
  // The replication stream to a replica: from `from` on, after the replies already queued, the
  // connection's loop writes the shared buffer's blocks as they fill (no copy per replica).
  // Replies to later commands of a replica are not sent (they would cut into the stream).
  virtual void StartStream(Backlog::Cursor from) = 0;
  // The shared buffer has more bytes: wakes the connection's loop (any thread).
  virtual void StreamMore() = 0;
  // The offset of the next stream byte not yet written to the socket (from StartStream on).
  virtual int64_t stream_sent() const = 0;
  // Unsent output: queued bytes (for maxmemory's accounting), or any at all (PSYNC is refused
  // on a connection that still has replies to write).
  virtual size_t output_pending() const = 0;
  virtual bool HasPendingOutput() = 0;
  // Closes the connection from its own loop (any thread).
  virtual void RequestClose() = 0;
  // Whether it is being closed (killed, or asked to close): it needs no more stream.
  virtual bool closing() const = 0;
  // Redis' line for a client closed for its output buffer limit.
  virtual void LogOverLimit() const = 0;

  // What the connection is: this server's own primary (the master client), a MONITOR, a client
  // inside MULTI. PSYNC makes it a replica (CLIENT LIST flags=S).
  virtual bool is_master() const = 0;
  virtual bool is_monitor() const = 0;
  virtual bool in_multi() const = 0;
  virtual void MarkReplica() = 0;
  // The stream offset this client's last write reached (what its WAIT waits for).
  virtual int64_t write_offset() const = 0;
  // Answers the client's blocked WAIT with the number of replicas that acknowledged.
  virtual void AnswerWait(int64_t replicas) = 0;
};

class Host {
 public:
  virtual ~Host() = default;

  // The keyspace lock (taken by the replica's link thread around each of its calls here).
  virtual std::timed_mutex& mu() = 0;
  virtual store::Keyspace& keyspace() = 0;

  // Settings, by their Redis names.
  virtual int64_t ConfigInt(const char* name) = 0;
  virtual std::string ConfigString(const char* name) = 0;
  virtual bool ConfigBool(const char* name) = 0;
  // Whether a snapshot's CRC-64 is checked on load: rdbchecksum, unless DEBUG
  // SET-SKIP-CHECKSUM-VALIDATION turned checks off.
  virtual bool VerifyRdbChecksum() = 0;
  // A setting the server changes itself (`replicaof` as REPLICAOF sets it): CONFIG GET and
  // CONFIG REWRITE show it.
  virtual void SetConfigInternal(const char* name, const std::string& value) = 0;
  // client-output-buffer-limit replica.
  virtual const net::OutputLimit& replica_limits() = 0;
  // The listening port (REPLCONF listening-port) and the TCP keepalive period (no lock needed).
  virtual int port() = 0;
  virtual int64_t tcp_keepalive_s() = 0;
  // The peer of the client whose command runs now (for log lines).
  virtual std::string CurrentClientPeer() = 0;

  // The replica side, as the primary side sees it: this server follows a primary (a replica
  // passes its primary's PINGs on, and refuses WAIT), its link is up (it serves syncs only
  // then), and REPLCONF GETACK from that primary is answered with an ACK.
  virtual bool IsReplica() = 0;
  virtual bool PrimaryLinkUp() = 0;
  virtual void SendAckToPrimary() = 0;

  // The snapshot child. One child runs at a time: OtherChildRunning says a BGSAVE's or an AOF
  // rewrite's does. WatchSnapshotChild has the server call Primary::OnChildExit as soon as `pid`
  // exits. In the forked child, PrepareSnapshotChild sets its process title and closes the
  // listening sockets (no lock: the child is alone).
  virtual bool OtherChildRunning() = 0;
  virtual void WatchSnapshotChild(pid_t pid) = 0;
  virtual void PrepareSnapshotChild(bool to_disk) = 0;
  // What the running child reports (keys written, copy-on-write size), for INFO persistence.
  virtual persist::ChildInfo& child_info() = 0;

  // The function libraries' codes, for a snapshot.
  virtual std::vector<std::string> FunctionCodes() = 0;
  // A loaded snapshot's function libraries replace the live ones; an error changes nothing.
  virtual Status InstallFunctions(const std::vector<std::string>& libraries) = 0;
  // A full sync replaced the dataset: the append-only file (when on) starts again from it.
  virtual void RestartAofAfterSync() = 0;
  // A full sync is about to replace the dataset (keyspace lock held): clients that track keys
  // get the null invalidation of a flush, and WATCHed keys of the old dataset are touched, as
  // Redis signals a flush of every database.
  virtual void DatasetReplaced() {}

  // The master client. AdoptMaster makes the connection `fd` one (through `tls`, its session
  // already established, when the link has one): `first` goes out before anything else,
  // `input` is read before the socket, and commands apply in `db`. Returns its client id.
  virtual uint64_t AdoptMaster(int fd, std::unique_ptr<net::TlsConn> tls, std::string first,
                               std::string input, int db) = 0;
  // The TLS context for connections this server opens (tls-replication); null when TLS is not
  // configured.
  virtual std::shared_ptr<net::TlsContext> TlsContext() = 0;
  // The db client `id` has selected, or -1 when it is gone.
  virtual int ClientDb(uint64_t id) = 0;
  // The bytes master client `id` has read and not applied yet (0 when it is gone).
  virtual size_t PendingInput(uint64_t id) = 0;
  virtual void PushToClient(uint64_t id, std::string_view bytes) = 0;
  virtual void CloseClient(uint64_t id) = 0;
  // The loop that runs the master client (no lock needed). On that loop's thread only:
  // HasClient says whether client `id` is still there, InjectInput hands it `bytes` as if read
  // from its socket (false when it is gone), and ResumeInput makes it run what it has.
  virtual net::EventLoop& master_loop() = 0;
  virtual bool HasClient(uint64_t id) = 0;
  virtual bool InjectInput(uint64_t id, std::string_view bytes) = 0;
  virtual void ResumeInput(uint64_t id) = 0;
};

}  // namespace kv::repl
