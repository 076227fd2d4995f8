#include "server/repl_replica_host.h"

#include "server/aof.h"
#include "server/client.h"
#include "server/poll_group.h"
#include "server/repl_primary.h"
#include "server/server.h"

namespace kv::server {

namespace {
// The master client runs on the first poll group.
constexpr size_t kMasterGroup = 0;
}  // namespace

std::mutex& ServerReplicaHost::mu() { return server_.mu(); }
store::Keyspace& ServerReplicaHost::keyspace() { return server_.keyspace(); }
int64_t ServerReplicaHost::ConfigInt(const char* name) { return server_.config().GetInt(name); }
std::string ServerReplicaHost::ConfigString(const char* name) {
  return server_.config().GetString(name);
}
bool ServerReplicaHost::ConfigBool(const char* name) { return server_.config().GetBool(name); }
void ServerReplicaHost::SetConfigInternal(const char* name, const std::string& value) {
  server_.config().SetInternal(name, value);
}
int ServerReplicaHost::port() { return server_.port(); }
int64_t ServerReplicaHost::tcp_keepalive_s() { return server_.tcp_keepalive_s(); }
std::string ServerReplicaHost::CurrentClientPeer() { return server_.current_client().peer(); }

repl::Feed& ServerReplicaHost::feed() { return server_.primary().feed(); }
const std::string& ServerReplicaHost::replid() { return server_.primary().replid(); }
void ServerReplicaHost::SetHistory(const std::string& replid, int64_t offset) {
  server_.primary().SetHistory(replid, offset);
}
void ServerReplicaHost::ContinueWith(const std::string& replid) {
  server_.primary().ContinueWith(replid);
}
void ServerReplicaHost::Promote() { server_.primary().Promote(); }
void ServerReplicaHost::DisconnectReplicas() { server_.primary().DisconnectReplicas(); }
void ServerReplicaHost::ProxyStream(std::string_view raw) { server_.primary().ProxyStream(raw); }

Status ServerReplicaHost::InstallFunctions(const std::vector<std::string>& libraries) {
  return server_.InstallFunctions(libraries);
}
void ServerReplicaHost::RestartAofAfterSync() { server_.aof().RestartAfterSync(); }

uint64_t ServerReplicaHost::AdoptMaster(int fd, std::string first, std::string input, int db) {
  uint64_t id = server_.NextClientId();
  server_.stats().connected_clients++;
  server_.group(kMasterGroup)
      .Adopt(net::Fd(fd), id, [first = std::move(first), input = std::move(input), db](Client& c) {
        c.set_flag(Client::kMaster, true);
        c.session().authenticated = true;
        c.session().obey = true;
        c.session().db = db;
        c.Push(first);
        if (!input.empty()) c.InjectInput(input);
      });
  return id;
}

int ServerReplicaHost::ClientDb(uint64_t id) {
  auto it = server_.clients().find(id);
  return it == server_.clients().end() ? -1 : it->second->session().db;
}

void ServerReplicaHost::PushToClient(uint64_t id, std::string_view bytes) {
  auto it = server_.clients().find(id);
  if (it != server_.clients().end()) it->second->Push(bytes);
}

void ServerReplicaHost::CloseClient(uint64_t id) {
  auto it = server_.clients().find(id);
  if (it != server_.clients().end()) it->second->RequestClose();
}

net::EventLoop& ServerReplicaHost::master_loop() { return server_.group(kMasterGroup).loop(); }

bool ServerReplicaHost::HasClient(uint64_t id) {
  return server_.group(kMasterGroup).Find(id) != nullptr;
}

bool ServerReplicaHost::InjectInput(uint64_t id, std::string_view bytes) {
  Client* c = server_.group(kMasterGroup).Find(id);
  if (c == nullptr) return false;
  c->InjectInput(bytes);
  return true;
}

void ServerReplicaHost::ResumeInput(uint64_t id) {
  if (Client* c = server_.group(kMasterGroup).Find(id)) c->ResumeInput();
}

}  // namespace kv::server
