#include "server/repl_host.h"

#include "repl/replica/replica.h"
#include "server/client.h"
#include "server/persistence/aof.h"
#include "server/persistence/persistence.h"
#include "server/poll_group.h"
#include "server/process_params.h"
#include "server/server.h"

namespace kv::server {

namespace {
// The master client runs on the first poll group.
constexpr size_t kMasterGroup = 0;
}  // namespace

std::timed_mutex& ServerReplHost::mu() { return server_.mu(); }
store::Keyspace& ServerReplHost::keyspace() { return server_.keyspace(); }
int64_t ServerReplHost::ConfigInt(const char* name) { return server_.config().GetInt(name); }
std::string ServerReplHost::ConfigString(const char* name) {
  return server_.config().GetString(name);
}
bool ServerReplHost::ConfigBool(const char* name) { return server_.config().GetBool(name); }
bool ServerReplHost::VerifyRdbChecksum() {
  return server_.config().GetBool("rdbchecksum") && !server_.debug_state().skip_checksum_validation;
}
void ServerReplHost::SetConfigInternal(const char* name, const std::string& value) {
  server_.config().SetInternal(name, value);
  // The server became a replica or a primary: oom-score-adj follows the role.
  if (std::string_view(name) == "replicaof") ApplyOomScoreForRole(server_.config());
}
int ServerReplHost::port() { return server_.port(); }
int64_t ServerReplHost::tcp_keepalive_s() { return server_.tcp_keepalive_s(); }
std::string ServerReplHost::CurrentClientPeer() { return server_.current_client().peer(); }

const net::OutputLimit& ServerReplHost::replica_limits() { return server_.replica_limits(); }

bool ServerReplHost::IsReplica() { return server_.replica().is_replica(); }
bool ServerReplHost::PrimaryLinkUp() { return server_.replica().link_up(); }
void ServerReplHost::SendAckToPrimary() { server_.replica().SendAck(); }

bool ServerReplHost::OtherChildRunning() {
  return server_.persistence().child_running() || server_.aof().child_running();
}
void ServerReplHost::WatchSnapshotChild(pid_t pid) { server_.WatchSnapshotChild(pid); }
void ServerReplHost::PrepareSnapshotChild(bool to_disk) {
  EnterChildProcess(server_.config(), /*aof_rewrite=*/false);
  server_.ShowChildProcTitle(to_disk ? Server::ChildKind::kBgsave : Server::ChildKind::kToReplicas);
  server_.CloseListenersInChild();
}

persist::ChildInfo& ServerReplHost::child_info() { return server_.child_info(); }

std::vector<std::string> ServerReplHost::FunctionCodes() { return server_.FunctionCodes(); }
Status ServerReplHost::InstallFunctions(const std::vector<std::string>& libraries) {
  return server_.InstallFunctions(libraries);
}
void ServerReplHost::RestartAofAfterSync() { server_.aof().RestartAfterSync(); }

void ServerReplHost::DatasetReplaced() { server_.DatasetReplaced(); }

uint64_t ServerReplHost::AdoptMaster(int fd, std::unique_ptr<net::TlsConn> tls, std::string first,
                                     std::string input, int db) {
  uint64_t id = server_.NextClientId();
  server_.stats().connected_clients++;
  // Adopt's callback is copyable: the TLS session travels in a shared holder.
  auto holder = std::make_shared<std::unique_ptr<net::TlsConn>>(std::move(tls));
  server_.group(kMasterGroup)
      .Adopt(net::Fd(fd), id,
             [holder, first = std::move(first), input = std::move(input), db](Client& c) {
               if (*holder) c.SetTls(std::move(*holder), "");
               c.set_flag(Client::kMaster, true);
               c.session().authenticated = true;
               c.session().obey = true;
               c.session().db = db;
               c.Push(first);
               if (!input.empty()) c.InjectInput(input);
             });
  return id;
}

std::shared_ptr<net::TlsContext> ServerReplHost::TlsContext() { return server_.tls_context(); }

int ServerReplHost::ClientDb(uint64_t id) {
  auto it = server_.clients().find(id);
  return it == server_.clients().end() ? -1 : it->second->session().db;
}

size_t ServerReplHost::PendingInput(uint64_t id) {
  auto it = server_.clients().find(id);
  return it == server_.clients().end() ? 0 : it->second->master_pending_input();
}

void ServerReplHost::PushToClient(uint64_t id, std::string_view bytes) {
  auto it = server_.clients().find(id);
  if (it != server_.clients().end()) it->second->Push(bytes);
}

void ServerReplHost::CloseClient(uint64_t id) {
  auto it = server_.clients().find(id);
  if (it != server_.clients().end()) it->second->RequestClose();
}

net::EventLoop& ServerReplHost::master_loop() { return server_.group(kMasterGroup).loop(); }

bool ServerReplHost::HasClient(uint64_t id) {
  return server_.group(kMasterGroup).Find(id) != nullptr;
}

bool ServerReplHost::InjectInput(uint64_t id, std::string_view bytes) {
  Client* c = server_.group(kMasterGroup).Find(id);
  if (c == nullptr) return false;
  c->InjectInput(bytes);
  return true;
}

void ServerReplHost::ResumeInput(uint64_t id) {
  if (Client* c = server_.group(kMasterGroup).Find(id)) c->ResumeInput();
}

}  // namespace kv::server
