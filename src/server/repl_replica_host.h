// The server's side of repl::ReplicaHost: what the replica side of replication reaches of the
// server, mapped onto it (config, the primary side, functions, AOF, the master client on poll
// group 0).
#pragma once

#include "repl/replica/host.h"

namespace kv::server {

class Server;

class ServerReplicaHost final : public repl::ReplicaHost {
 public:
  explicit ServerReplicaHost(Server& server) : server_(server) {}

  std::mutex& mu() override;
  store::Keyspace& keyspace() override;
  int64_t ConfigInt(const char* name) override;
  std::string ConfigString(const char* name) override;
  bool ConfigBool(const char* name) override;
  void SetConfigInternal(const char* name, const std::string& value) override;
  int port() override;
  int64_t tcp_keepalive_s() override;
  std::string CurrentClientPeer() override;

  repl::Feed& feed() override;
  const std::string& replid() override;
  void SetHistory(const std::string& replid, int64_t offset) override;
  void ContinueWith(const std::string& replid) override;
  void Promote() override;
  void DisconnectReplicas() override;
  void ProxyStream(std::string_view raw) override;

  Status InstallFunctions(const std::vector<std::string>& libraries) override;
  void RestartAofAfterSync() override;

  uint64_t AdoptMaster(int fd, std::string first, std::string input, int db) override;
  int ClientDb(uint64_t id) override;
  void PushToClient(uint64_t id, std::string_view bytes) override;
  void CloseClient(uint64_t id) override;
  net::EventLoop& master_loop() override;
  bool HasClient(uint64_t id) override;
  bool InjectInput(uint64_t id, std::string_view bytes) override;
  void ResumeInput(uint64_t id) override;

 private:
  Server& server_;
};

}  // namespace kv::server
