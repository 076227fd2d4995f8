// What the replica side of replication needs from the server it runs in, and nothing more: the
// keyspace and its lock, the settings, this server's own history (its primary side: a replica
// passes its primary's stream on to its own replicas), the function libraries and the AOF a
// full sync replaces, and the master client (the connection to the primary once synced, which
// the server runs as a client whose commands apply without replies).
//
// Every call is made with the keyspace lock (mu()) held, except where it says otherwise.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "net/event_loop.h"
#include "repl/feed.h"
#include "store/keyspace.h"

namespace kv::repl {

class ReplicaHost {
 public:
  virtual ~ReplicaHost() = default;

  // The keyspace lock (taken by the replica's link thread around each of its calls here).
  virtual std::mutex& mu() = 0;
  virtual store::Keyspace& keyspace() = 0;

  // Settings, by their Redis names.
  virtual int64_t ConfigInt(const char* name) = 0;
  virtual std::string ConfigString(const char* name) = 0;
  virtual bool ConfigBool(const char* name) = 0;
  // A setting the server changes itself (`replicaof` as REPLICAOF sets it): CONFIG GET and
  // CONFIG REWRITE show it.
  virtual void SetConfigInternal(const char* name, const std::string& value) = 0;
  // The listening port (REPLCONF listening-port) and the TCP keepalive period (no lock needed).
  virtual int port() = 0;
  virtual int64_t tcp_keepalive_s() = 0;
  // The peer of the client whose command runs now (for log lines).
  virtual std::string CurrentClientPeer() = 0;

  // This server's history and its own replicas.
  virtual Feed& feed() = 0;
  virtual const std::string& replid() = 0;
  // A full sync: this server takes its primary's history (a new backlog).
  virtual void SetHistory(const std::string& replid, int64_t offset) = 0;
  // +CONTINUE <id>: the primary goes on under a new replid.
  virtual void ContinueWith(const std::string& replid) = 0;
  // REPLICAOF NO ONE: this server becomes a primary, keeping its history for its replicas.
  virtual void Promote() = 0;
  virtual void DisconnectReplicas() = 0;
  // The primary's stream, passed on verbatim to this server's replicas.
  virtual void ProxyStream(std::string_view raw) = 0;

  // A loaded snapshot's function libraries replace the live ones; an error changes nothing.
  virtual Status InstallFunctions(const std::vector<std::string>& libraries) = 0;
  // A full sync replaced the dataset: the append-only file (when on) starts again from it.
  virtual void RestartAofAfterSync() = 0;

  // The master client. AdoptMaster makes the connection `fd` one: `first` goes out before
  // anything else, `input` is read before the socket, and commands apply in `db`. Returns its
  // client id.
  virtual uint64_t AdoptMaster(int fd, std::string first, std::string input, int db) = 0;
  // The db client `id` has selected, or -1 when it is gone.
  virtual int ClientDb(uint64_t id) = 0;
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
