// What a cluster node knows of one node (itself included), in the terms Redis 7.0's cluster
// bus carries and its nodes.conf stores: the 40-character name, addresses, flags, the primary
// it replicates, epochs and the slots it serves. Plain data: the bus codec (bus_wire.h) and the
// nodes.conf reader and writer (nodes_conf.h) translate it, the cluster state owns it.
#pragma once

#include <bitset>
#include <cstdint>
#include <map>
#include <string>

#include "common/key_slot.h"

namespace kv::cluster {

inline constexpr int kNameLen = 40;  // a node name: 40 lower-case hex characters

// Slot s is bit s. (On the bus, as in Redis, slot s is bit s % 8 of byte s / 8.)
using SlotBitmap = std::bitset<kClusterSlots>;

// Node flags: the bits Redis 7.0 puts on the bus (the header's and each gossip entry's flags).
enum NodeFlag : uint16_t {
  kFlagMaster = 1 << 0,
  kFlagReplica = 1 << 1,
  kFlagPFail = 1 << 2,  // "fail?": this node's own suspicion
  kFlagFail = 1 << 3,   // agreed by a majority of primaries
  kFlagMyself = 1 << 4,
  kFlagHandshake = 1 << 5,   // met, its name not yet known
  kFlagNoAddr = 1 << 6,      // address unknown
  kFlagMeet = 1 << 7,        // send a MEET, not a PING, on the next connection
  kFlagMigrateTo = 1 << 8,   // a replica that may migrate to an orphaned primary
  kFlagNoFailover = 1 << 9,  // a replica that never fails over
};

struct NodeInfo {
  std::string name;              // kNameLen hex characters
  std::string ip;                // "" when unknown (noaddr)
  int port = 0;                  // the client port (the TLS port where tls-cluster is on)
  int cport = 0;                 // the cluster bus port
  int pport = 0;                 // the plain-text client port where `port` is the TLS one, else 0
  std::string hostname;          // cluster-announce-hostname; "" when none
  uint16_t flags = 0;            // NodeFlag bits
  std::string primary;           // the primary's name for a replica, "" for a primary
  int64_t ping_sent_ms = 0;      // when the PING now unanswered was sent; 0 when none is
  int64_t pong_received_ms = 0;  // when the last PONG came
  uint64_t config_epoch = 0;
  bool link_connected = false;  // nodes.conf's link-state: "connected" / "disconnected"
  SlotBitmap slots;
  // Of this node itself only (nodes.conf's [slot->-name] and [slot-<-name]): slots being
  // migrated to, or imported from, the named node.
  std::map<int, std::string> migrating, importing;
};

}  // namespace kv::cluster
