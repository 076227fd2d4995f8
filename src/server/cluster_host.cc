#include "server/cluster_host.h"

#include "common/clock.h"
#include "common/logging.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/server.h"
#include "server/slot_migration.h"

namespace kv::server {

std::timed_mutex& ServerClusterHost::mu() { return server_.mu(); }
store::Keyspace& ServerClusterHost::keyspace() { return server_.keyspace(); }
int64_t ServerClusterHost::ConfigInt(const char* name) { return server_.config().GetInt(name); }
std::string ServerClusterHost::ConfigString(const char* name) {
  return server_.config().GetString(name);
}
bool ServerClusterHost::ConfigBool(const char* name) { return server_.config().GetBool(name); }
int ServerClusterHost::port() { return server_.port(); }
int ServerClusterHost::tls_port() { return server_.tls_port(); }
std::shared_ptr<net::TlsContext> ServerClusterHost::TlsContext() { return server_.tls_context(); }

Result<std::vector<net::Fd>> ServerClusterHost::ListenTcp(int port) {
  return server_.ListenTcpOn(port, server_.config().GetString("bind"));
}

// A replica's stream offset is its primary's, so the feed's offset is right on both sides.
// A replica loading a full sync has none yet: 0, as Redis announces then (CLUSTER SHARDS
// shows it "loading").
int64_t ServerClusterHost::ReplOffset() {
  repl::Replica& r = server_.replica();
  if (r.is_replica() && (r.loading() || r.async_loading())) return 0;
  return server_.primary().feed().offset();
}

void ServerClusterHost::Follow(const std::string& ip, int port) {
  repl::Replica& r = server_.replica();
  r.Follow(ip, port);
}

void ServerClusterHost::StopFollowing() {
  if (!server_.replica().is_replica()) return;
  LOG_NOTICE("MASTER MODE enabled (cluster failover)");
  server_.replica().Unfollow();
  server_.config().SetInternal("replicaof", "");
}

bool ServerClusterHost::Following() { return server_.replica().is_replica(); }

bool ServerClusterHost::LoadingSync() { return server_.replica().loading(); }

int64_t ServerClusterHost::PrimaryDataAgeMs() { return server_.replica().data_age_ms(WallMs()); }

void ServerClusterHost::PauseWritesForFailover(int64_t) {
  // The cluster ends the manual failover, and with it the pause, within its timeout.
  server_.PauseWritesFor(Server::PausePurpose::kFailover);
}

void ServerClusterHost::EndFailoverPause() { server_.UnpauseFor(Server::PausePurpose::kFailover); }

void ServerClusterHost::PublishLocal(std::string_view channel, std::string_view message,
                                     bool shard) {
  if (shard) {
    server_.PublishShard(channel, message);
  } else {
    server_.Publish(channel, message);
  }
}

void ServerClusterHost::UnsubscribeShardSlot(int slot) { server_.UnsubscribeShardSlot(slot); }

size_t Server::DeleteSlotKeys(int slot) {
  store::Db& db = keyspace_->db(0);
  std::vector<std::string> keys;
  for (store::Entry* e : db.SlotKeys(slot)) keys.emplace_back(e->key());
  for (const std::string& k : keys) DeleteMovedKey(k);
  return keys.size();
}

void Server::DeleteMovedKey(const std::string& k) {
  keyspace_->ServerDelete(0, k);
  KeyModified(0, k);
  PropagateDeletion(0, k);
}

void ServerClusterHost::DeleteKeysInSlot(int slot) {
  if (size_t n = server_.DeleteSlotKeys(slot); n > 0) {
    LOG_NOTICE("Deleted %zu keys of slot %d, which this node no longer serves", n, slot);
  }
}

void ServerClusterHost::SlotMigrationCommand(cmd::Context& c) {
  server_.slot_migrations().Command(c);
}

}  // namespace kv::server
