#include "tests/support/cluster_client.h"

#include <cstdlib>

namespace kv::test {

namespace {

// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis' crc16.c.
uint16_t Crc16(std::string_view s) {
  uint16_t crc = 0;
  for (unsigned char c : s) {
    crc ^= static_cast<uint16_t>(c) << 8;
    for (int bit = 0; bit < 8; bit++) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

constexpr int kMaxRedirects = 16;

}  // namespace

int KeySlot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key) & (kClusterSlots - 1);
}

bool ParseRedirect(const Reply& reply, Redirect* out) {
  if (!reply.is_error()) return false;
  const std::string& s = reply.str;
  bool ask = s.rfind("ASK ", 0) == 0;
  if (!ask && s.rfind("MOVED ", 0) != 0) return false;
  size_t slot_at = s.find(' ') + 1;
  size_t addr_at = s.find(' ', slot_at);
  size_t colon = s.rfind(':');
  if (addr_at == std::string::npos || colon == std::string::npos || colon < addr_at) return false;
  out->ask = ask;
  out->slot = atoi(s.c_str() + slot_at);
  out->ip = s.substr(addr_at + 1, colon - addr_at - 1);
  out->port = atoi(s.c_str() + colon + 1);
  return out->port > 0 && out->slot >= 0 && out->slot < kClusterSlots;
}

ClusterClient::ClusterClient(int seed_port, int timeout_ms)
    : seed_port_(seed_port), timeout_ms_(timeout_ms) {}

RespClient& ClusterClient::Conn(int port) {
  auto& conn = conns_[port];
  if (!conn) conn = std::make_unique<RespClient>(port, timeout_ms_);
  return *conn;
}

Reply ClusterClient::Call(const std::vector<std::string>& args, size_t key_index) {
  int port = seed_port_;
  if (key_index < args.size()) {
    int known = owner_[KeySlot(args[key_index])];
    if (known != 0) port = known;
  }
  bool asking = false;
  Reply reply;
  for (int hop = 0; hop <= kMaxRedirects; hop++) {
    RespClient& c = Conn(port);
    if (asking) {
      // ASKING and the command go together, so that nothing else runs on the connection between.
      c.SendRaw(RespClient::Encode({"ASKING"}) + RespClient::Encode(args));
      Reply ok = c.Read();
      reply = ok.type == 0 ? ok : c.Read();
      if (ok.type != '+') reply = ok;  // ASKING itself failed: that is the answer
    } else {
      reply = c.Call(args);
    }
    if (reply.type == 0) {
      conns_.erase(port);
      return reply;
    }
    Redirect r;
    if (!ParseRedirect(reply, &r)) return reply;
    port = r.port;
    asking = r.ask;
    if (r.ask) {
      asked_++;
    } else {
      moved_++;
      owner_[r.slot] = r.port;
    }
  }
  return reply;  // still redirected after kMaxRedirects hops
}

}  // namespace kv::test
