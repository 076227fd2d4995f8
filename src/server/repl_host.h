// The server's side of repl::Host: what replication reaches of the server, mapped onto it
// (config, the replica side's state, the children, functions, AOF, the master client on poll
// group 0). The replica connections themselves are Clients (client.h implements
// repl::ClientConn).
#pragma once

#include "repl/host.h"

namespace kv::server {

class Server;

class ServerReplHost final : public repl::Host {
 public:
  explicit ServerReplHost(Server& server) : server_(server) {}

  std::timed_mutex& mu() override;
  store::Keyspace& keyspace() override;
  int64_t ConfigInt(const char* name) override;
  std::string ConfigString(const char* name) override;
  bool ConfigBool(const char* name) override;
  bool VerifyRdbChecksum() override;
  void SetConfigInternal(const char* name, const std::string& value) override;
  const net::OutputLimit& replica_limits() override;
  int port() override;
  int64_t tcp_keepalive_s() override;
  std::string CurrentClientPeer() override;

  bool IsReplica() override;
  bool PrimaryLinkUp() override;
  void SendAckToPrimary() override;

  bool OtherChildRunning() override;
  void WatchSnapshotChild(pid_t pid) override;
  void PrepareSnapshotChild(bool to_disk) override;
  persist::ChildInfo& child_info() override;

  std::vector<std::string> FunctionCodes() override;
  Status InstallFunctions(const std::vector<std::string>& libraries) override;
  void RestartAofAfterSync() override;
  void DatasetReplaced() override;

  uint64_t AdoptMaster(int fd, std::unique_ptr<net::TlsConn> tls, std::string first,
                       std::string input, int db) override;
  std::shared_ptr<net::TlsContext> TlsContext() override;
  int ClientDb(uint64_t id) override;
  size_t PendingInput(uint64_t id) override;
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
