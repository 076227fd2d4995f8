// A client of a whole Redis Cluster for end-to-end tests: it sends each command to the node that
// owns the command's key as far as it knows, and follows the cluster's redirections the way a
// cluster-aware client library does.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/resp_client.h"

namespace kv::test {

inline constexpr int kClusterSlots = 16384;

// The hash slot of `key` as CLUSTER KEYSLOT computes it: CRC16 (XMODEM) of the key, or of its
// hash tag (what lies between the first '{' and the next '}', when that is not empty), mod 16384.
int KeySlot(std::string_view key);

// A redirection reply: "-MOVED <slot> <ip>:<port>" or "-ASK <slot> <ip>:<port>".
struct Redirect {
  bool ask = false;  // ASK (this command only) rather than MOVED (the slot's new owner)
  int slot = -1;
  std::string ip;
  int port = 0;
};
// `reply` read as a redirection; false when it is none.
bool ParseRedirect(const Reply& reply, Redirect* out);

// Sends commands to the node that owns their key's slot (learned from -MOVED replies, starting
// from the seed node), follows -MOVED (remembering the new owner) and -ASK (sending ASKING
// first, remembering nothing), up to 16 redirections in a row. Every node is reached on
// 127.0.0.1 at the port a redirection names. Other replies, errors included, are returned as they
// are; a reply of type 0 (connection lost) also forgets that connection. Owned by one thread.
class ClusterClient {
 public:
  explicit ClusterClient(int seed_port, int timeout_ms = 10000);

  // Sends `args`, whose key is args[key_index]; a command with no key there goes to the seed.
  Reply Call(const std::vector<std::string>& args, size_t key_index = 1);

  // Redirections followed so far.
  int64_t moved() const { return moved_; }
  int64_t asked() const { return asked_; }

 private:
  RespClient& Conn(int port);

  int seed_port_;
  int timeout_ms_;
  std::map<int, std::unique_ptr<RespClient>> conns_;  // by port
  std::array<int, kClusterSlots> owner_{};            // port; 0 when not known
  int64_t moved_ = 0, asked_ = 0;
};

}  // namespace kv::test
