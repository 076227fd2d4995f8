// The server's side of cluster::Host: what the cluster reaches of the server (config, ports,
// the replication offset and the replica side, pub/sub, slot deletion, the failover pause).
#pragma once

#include "cluster/cluster.h"

namespace kv::server {

class Server;

class ServerClusterHost final : public cluster::Host {
 public:
  explicit ServerClusterHost(Server& server) : server_(server) {}

  std::timed_mutex& mu() override;
  store::Keyspace& keyspace() override;
  int64_t ConfigInt(const char* name) override;
  std::string ConfigString(const char* name) override;
  bool ConfigBool(const char* name) override;
  int port() override;
  int tls_port() override;
  std::shared_ptr<net::TlsContext> TlsContext() override;
  Result<std::vector<net::Fd>> ListenTcp(int port) override;
  int64_t ReplOffset() override;
  void Follow(const std::string& ip, int port) override;
  void StopFollowing() override;
  bool Following() override;
  bool LoadingSync() override;
  int64_t PrimaryDataAgeMs() override;
  void PauseWritesForFailover(int64_t end_ms) override;
  void EndFailoverPause() override;
  void PublishLocal(std::string_view channel, std::string_view message, bool shard) override;
  void DeleteKeysInSlot(int slot) override;
  void UnsubscribeShardSlot(int slot) override;
  void SlotMigrationCommand(cmd::Context& c) override;

 private:
  Server& server_;
};

}  // namespace kv::server
