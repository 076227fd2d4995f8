// The cluster's node and link records, for the files that implement Cluster (cluster.h) only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cluster/cluster.h"

namespace kv::cluster {

// Todo flags: what the end of an event (Cluster::AfterEvent) does, as Redis' clusterBeforeSleep.
enum : int {
  kTodoUpdateState = 1 << 0,
  kTodoSaveConfig = 1 << 1,
  kTodoHandleFailover = 1 << 2,
  kTodoHandleManualFailover = 1 << 3,
  kTodoFsyncConfig = 1 << 4,  // the save is fsynced (epochs, slots from the bus, failovers)
};

// Multipliers and delays from Redis 7.0's cluster.h and cluster.c.
inline constexpr int kFailReportValidityMult = 2;  // reports older than node timeout * 2 expire
inline constexpr int kFailUndoTimeMult = 2;        // a failed primary's FAIL undone after this
inline constexpr int64_t kMfTimeout = 5000;        // a manual failover's deadline (ms)
inline constexpr int kMfPauseMult = 2;             // the primary pauses writes this much longer
inline constexpr int64_t kReplicaMigrationDelay = 5000;
inline constexpr int64_t kBlacklistTtlS = 60;
inline constexpr int64_t kWritableDelayMs = 2000;
inline constexpr int64_t kMaxRejoinDelayMs = 5000;
inline constexpr int64_t kMinRejoinDelayMs = 500;

struct Cluster::Node {
  std::string name;
  std::string ip;  // "" when unknown
  int port = 0, cport = 0, pport = 0;
  std::string hostname;
  uint16_t flags = 0;
  Node* primary = nullptr;
  std::vector<Node*> replicas;
  uint64_t config_epoch = 0;
  SlotBitmap slots;
  int numslots = 0;
  int64_t ctime = 0;          // when it was created (ms)
  int64_t ping_sent = 0;      // the unanswered PING's time, 0 when none
  int64_t pong_received = 0;  // the last PONG's
  int64_t data_received = 0;  // anything from it
  int64_t fail_time = 0;      // when it was flagged FAIL
  int64_t voted_time = 0;     // our last vote for one of its replicas
  int64_t repl_offset_time = 0;
  int64_t orphaned_time = 0;
  int64_t repl_offset = 0;
  std::map<Node*, int64_t> fail_reports;  // reporter -> when
  Link* link = nullptr;                   // the link we opened to it
  Link* inbound_link = nullptr;           // the link it opened to us

  bool is_primary() const { return flags & kFlagMaster; }
  bool is_replica() const { return flags & kFlagReplica; }
  bool in_handshake() const { return flags & kFlagHandshake; }
  bool has_addr() const { return !(flags & kFlagNoAddr); }
  bool timed_out() const { return flags & kFlagPFail; }
  bool failed() const { return flags & kFlagFail; }
};

struct Cluster::Link {
  Cluster* cluster = nullptr;
  net::Fd fd;
  std::unique_ptr<net::TlsConn> tls;  // tls-cluster: the link's session (on `fd`)
  bool inbound = false;
  bool connecting = false;  // a non-blocking connect not finished yet
  bool dead = false;        // freed: waits in dead_links_ for the event to end
  int write_errno = 0;      // a write failed (errno): the link goes at its next event
  Node* node = nullptr;
  int64_t ctime = 0;
  std::string rbuf;
  std::string wbuf;
  size_t wpos = 0;
  uint32_t events = 0;  // what the loop watches for
  std::unique_ptr<net::FdHandler> handler;
};

}  // namespace kv::cluster
