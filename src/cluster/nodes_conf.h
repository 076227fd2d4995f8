// nodes.conf, read and written as Redis 7.0 reads and writes it, so that a kvstore node can start
// from a file redis-server wrote and the other way round. The same per-node text is the reply
// to CLUSTER NODES, so that command is produced by NodeLine too.
//
// One line per node, fields separated by one space:
//   <name> <ip>:<port>@<cport>[,<hostname>] <flags> <primary name or -> <ping-sent ms>
//   <pong-received ms> <config-epoch> connected|disconnected [<slot>|<first>-<last>]...
//   [[<slot>->-<name>]|[<slot>-<-<name>]]...
// and, last, "vars currentEpoch <n> lastVoteEpoch <m>".
//
// Pure functions over plain data (thread-safe), plus one file write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/node_info.h"
#include "common/status.h"

namespace kv::cluster {

struct NodesFile {
  std::vector<NodeInfo> nodes;  // in the file's order
  uint64_t current_epoch = 0;
  uint64_t last_vote_epoch = 0;
};

// Contiguous runs of set bits as [first, last] pairs, ascending: the slot ranges of nodes.conf,
// CLUSTER NODES, CLUSTER SLOTS and CLUSTER SHARDS.
std::vector<std::pair<int, int>> SlotRanges(const SlotBitmap& slots);

// The flags field: the names of the set flags in Redis' order (myself, master, slave, fail?,
// fail, handshake, noaddr, nofailover) joined by commas, or "noflags". kFlagMeet and
// kFlagMigrateTo have no name and are never written.
std::string FlagsText(uint16_t flags);

// One node's line (no newline), byte for byte as Redis 7.0's clusterGenNodeDescription writes it.
// What it writes is what `n` holds; the caller supplies what Redis derives:
//  - a replica's config epoch is its primary's (Redis writes the primary's epoch for replicas);
//  - the link state is "connected" when n.link_connected or n is myself;
//  - migrating and importing entries are written for myself only, one per slot in slot order,
//    the migrating one where a slot is in both maps;
//  - use_pport (CLUSTER NODES to a plain-text client of a TLS cluster) writes n.pport in place
//    of n.port where n.pport is not 0; nodes.conf never does.
std::string NodeLine(const NodeInfo& n, bool use_pport = false);

// The whole file: NodeLine of each node but those in handshake (Redis leaves them out of
// nodes.conf; CLUSTER NODES shows them), then the vars line, each line ending in "\n".
std::string FormatNodesFile(const NodesFile& f);

// Parses a whole nodes.conf (or a CLUSTER NODES reply, which has no vars line). Accepts what
// Redis 7.0's clusterLoadConfig accepts, and more strictly:
//  - blank lines are skipped; fields are split as Redis splits them (sdssplitargs);
//  - a "vars" line may come anywhere, holds name/value pairs (currentEpoch, lastVoteEpoch;
//    other names are logged and skipped) and needs an even number of words after "vars";
//  - a node line has at least 8 fields; names are 40 characters of [a-z0-9];
//  - the address is ip:port[@cport][,hostname]: the ip is everything before the last ':' (so
//    an IPv6 address needs no brackets) and may be empty; without "@cport" (files older than
//    4.0) the bus port is port + 10000; Redis 7.2's auxiliary fields after the hostname
//    ("...,hostname,shard-id=...,tcp-port=...") are accepted and ignored;
//  - flag names are matched ignoring case; an unknown one is an error (Redis panics);
//  - numbers are strict decimals, ports within 0..65535 and slots within 0..16383, where Redis'
//    atoi would read garbage as 0; a range whose last slot comes before its first is an error
//    (Redis skips it silently); the link-state field must read connected or disconnected
//    (Redis does not look at it);
//  - exactly one node is myself (Redis refuses a file without one and asserts on a second);
//    a node named twice is an error (Redis would merge the lines).
// The values are kept as the file has them; what Redis changes while loading is the cluster
// state's to do: nonzero ping-sent/pong-received become "now", a failed node's fail time is
// "now", a replica's config epoch is 0, every link starts disconnected, and currentEpoch is
// raised to the greatest config epoch. Migrating/importing entries are kept on the node whose
// line holds them (Redis writes them on myself's line only). pport is always 0.
// An error names the line number and text after Redis' words for a bad file
// ("Unrecoverable error: corrupted cluster config file").
Result<NodesFile> ParseNodesFile(std::string_view text);

// Reads and parses the file at `path`. A missing or empty file means "no configuration yet,
// start as a new node" (Redis creates an empty one when it locks the file): nullopt, not an
// error. A file that cannot be read or does not parse is an error.
Result<std::optional<NodesFile>> LoadNodesFile(const std::string& path);

// Writes FormatNodesFile(f) to `path` so that a crash at any moment leaves the old file or the
// new one whole: the text goes to "<path>.tmp-<pid>" in the same directory, is fsynced, is
// renamed over `path`, and the directory is fsynced. Without `fsync` the two fsyncs are left
// out: a crash of the process still leaves one whole file, a crash of the machine may not. On
// failure the old file is untouched and the temporary file removed. (Redis 7.0 writes in place,
// padding with newlines, and truncates; a crash in between can leave a mix of old and new lines.)
Status WriteNodesFileAtomically(const std::string& path, const NodesFile& f, bool fsync = true);
// The same with the text already formatted (FormatNodesFile's).
Status WriteNodesTextAtomically(const std::string& path, const std::string& text, bool fsync);

}  // namespace kv::cluster
