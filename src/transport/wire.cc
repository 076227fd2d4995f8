#include "transport/wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/strutil.h"

namespace kv::transport {

namespace {
template <typename T>
void Put(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));  // the supported targets are little-endian (x86-64, aarch64)
}
template <typename T>
T Take(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
}  // namespace

void EncodeControl(const ControlMsg& m, uint8_t* out) {
  Put<uint32_t>(out, kControlMagic);
  Put<uint16_t>(out + 4, static_cast<uint16_t>(m.type));
  Put<uint16_t>(out + 6, m.slot);
  Put<uint32_t>(out + 8, m.length);
  Put<uint32_t>(out + 12, m.code);
  Put<uint64_t>(out + 16, m.offset);
  Put<uint64_t>(out + 24, m.link_id);
}

Result<ControlMsg> DecodeControl(std::span<const uint8_t> b, uint64_t link_id) {
  if (b.size() != kControlMsgSize) {
    return Status::Corruption("control message of " + std::to_string(b.size()) + " bytes, want " +
                              std::to_string(kControlMsgSize));
  }
  if (Take<uint32_t>(b.data()) != kControlMagic) return Status::Corruption("bad control magic");
  ControlMsg m;
  uint16_t type = Take<uint16_t>(b.data() + 4);
  if (type < 1 || type > 4) return Status::Corruption("unknown control type " + std::to_string(type));
  m.type = static_cast<MsgType>(type);
  m.slot = Take<uint16_t>(b.data() + 6);
  m.length = Take<uint32_t>(b.data() + 8);
  m.code = Take<uint32_t>(b.data() + 12);
  m.offset = Take<uint64_t>(b.data() + 16);
  m.link_id = Take<uint64_t>(b.data() + 24);
  if (m.link_id != link_id) return Status::Corruption("control message for another link");
  return m;
}

const char* MsgTypeName(MsgType t) {
  switch (t) {
    case MsgType::kCredit: return "credit";
    case MsgType::kChunk: return "chunk";
    case MsgType::kFin: return "fin";
    case MsgType::kError: return "error";
  }
  return "?";
}

void Blob::SetBytes(const std::string& key, std::string_view bytes) {
  fields_[key] = HexEncode(bytes);
}

std::string Blob::Encode() const {
  std::string out;
  for (const auto& [k, v] : fields_) out += k + "=" + v + "\n";
  return out;
}

Result<Blob> Blob::Decode(std::string_view text) {
  Blob b;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return Status::Corruption("setup blob: unterminated line");
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return Status::Corruption("setup blob: bad line");
    b.fields_[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return b;
}

Result<std::string> Blob::Get(const std::string& key) const {
  auto it = fields_.find(key);
  if (it == fields_.end()) return Status::Corruption("setup blob: missing field '" + key + "'");
  return it->second;
}

Result<uint64_t> Blob::GetU64(const std::string& key) const {
  auto s = Get(key);
  if (!s.ok()) return s.status();
  auto v = ParseUint64(*s);
  if (!v) return Status::Corruption("setup blob: field '" + key + "' is not a number");
  return *v;
}

Result<std::string> Blob::GetBytes(const std::string& key) const {
  auto s = Get(key);
  if (!s.ok()) return s.status();
  if (s->size() % 2 != 0) return Status::Corruption("setup blob: odd hex in '" + key + "'");
  std::string out;
  if (!HexDecode(*s, &out)) return Status::Corruption("setup blob: bad hex in '" + key + "'");
  return out;
}

namespace {
// Moves exactly len bytes (send or recv) before the deadline.
Status Transfer(int fd, char* p, size_t len, bool out, int64_t deadline) {
  while (len > 0) {
    int64_t left = deadline - MonoMs();
    if (left <= 0) return Status::Closed("control link timed out");
    pollfd pfd{fd, static_cast<short>(out ? POLLOUT : POLLIN), 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left));
    if (r < 0 && errno != EINTR) return Status::FromErrno("poll", errno);
    if (r <= 0) continue;
    ssize_t n = out ? ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                    : ::recv(fd, p, len, MSG_DONTWAIT);
    if (n == 0) return Status::Closed("control link closed");
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return Status::FromErrno("control link", errno);
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::Ok();
}
}  // namespace

Result<std::string> ExchangeBlobs(int fd, std::string_view mine, int timeout_ms) {
  constexpr uint32_t kMax = 64 * 1024;
  if (mine.size() > kMax) return Status::Invalid("setup blob too large");
  int64_t deadline = MonoMs() + timeout_ms;
  std::string out(4, '\0');
  uint32_t len = static_cast<uint32_t>(mine.size());
  std::memcpy(out.data(), &len, 4);
  out.append(mine);
  if (Status s = Transfer(fd, out.data(), out.size(), true, deadline); !s.ok()) return s;
  uint32_t peer_len = 0;
  if (Status s = Transfer(fd, reinterpret_cast<char*>(&peer_len), 4, false, deadline); !s.ok()) {
    return s;
  }
  if (peer_len > kMax) return Status::Corruption("peer setup blob too large");
  std::string peer(peer_len, '\0');
  if (Status s = Transfer(fd, peer.data(), peer_len, false, deadline); !s.ok()) return s;
  return peer;
}

}  // namespace kv::transport
