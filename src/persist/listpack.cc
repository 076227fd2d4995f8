#include "persist/listpack.h"

#include <cstring>

#include "common/strutil.h"
#include "store/stream_lp.h"

namespace kv::persist {
namespace {

constexpr size_t kHeaderSize = 6;
constexpr uint8_t kEof = 0xFF;

size_t BacklenSize(size_t l) {
  if (l <= 127) return 1;
  if (l < 16383) return 2;
  if (l < 2097151) return 3;
  if (l < 268435455) return 4;
  return 5;
}

uint64_t GetLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

int64_t SignExtend(uint64_t v, int bits) {
  uint64_t m = 1ULL << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

}  // namespace

void ListpackBuilder::Clear() {
  buf_.assign(kHeaderSize, '\0');
  count_ = 0;
}

// The entry encodings are the in-memory listpack's (store/stream_lp.h), so both write the same
// bytes.
void ListpackBuilder::AddInt(int64_t v) {
  uint8_t buf[16];
  size_t n = store::StreamListpack::EncodeInt(v, buf);
  buf_.append(reinterpret_cast<const char*>(buf), n);
  count_++;
}

void ListpackBuilder::Add(std::string_view s) {
  if (s.size() <= 20) {
    if (auto v = ParseInt64(s)) return AddInt(*v);
  }
  size_t start = buf_.size();
  buf_.resize(start + s.size() + 16);
  size_t n =
      store::StreamListpack::EncodeString(s, reinterpret_cast<uint8_t*>(buf_.data() + start));
  buf_.resize(start + n);
  count_++;
}

std::string_view ListpackBuilder::Finish() {
  buf_.push_back(static_cast<char>(kEof));
  uint32_t total = static_cast<uint32_t>(buf_.size());
  uint16_t n = count_ < 65535 ? static_cast<uint16_t>(count_) : 65535;
  memcpy(buf_.data(), &total, 4);
  memcpy(buf_.data() + 4, &n, 2);
  return buf_;
}

Status ForEachListpackEntry(std::string_view blob,
                            const std::function<Status(std::string_view)>& fn) {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(blob.data());
  size_t size = blob.size();
  if (size < kHeaderSize + 1) return Status::Corruption("listpack shorter than its header");
  if (GetLE(base, 4) != size) return Status::Corruption("listpack size field mismatch");
  if (base[size - 1] != kEof) return Status::Corruption("listpack without terminator");
  size_t declared = GetLE(base + 4, 2);
  size_t pos = kHeaderSize, count = 0, end = size - 1;
  char num[24];
  while (pos < end) {
    const uint8_t* p = base + pos;
    size_t avail = end - pos;
    uint8_t b = p[0];
    size_t hdr = 1, len = 0;
    bool is_int = true;
    int64_t iv = 0;
    if ((b & 0x80) == 0) {
      iv = b;
    } else if ((b & 0xC0) == 0x80) {
      is_int = false;
      len = b & 0x3F;
    } else if ((b & 0xE0) == 0xC0) {
      if (avail < 2) return Status::Corruption("listpack entry past the end");
      iv = SignExtend(((b & 0x1FULL) << 8) | p[1], 13);
      hdr = 2;
    } else if ((b & 0xF0) == 0xE0) {
      if (avail < 2) return Status::Corruption("listpack entry past the end");
      is_int = false;
      len = ((b & 0x0F) << 8) | p[1];
      hdr = 2;
    } else if (b == 0xF0) {
      if (avail < 5) return Status::Corruption("listpack entry past the end");
      is_int = false;
      len = GetLE(p + 1, 4);
      hdr = 5;
    } else if (b >= 0xF1 && b <= 0xF4) {
      static constexpr int kBytes[] = {2, 3, 4, 8};
      int n = kBytes[b - 0xF1];
      if (avail < static_cast<size_t>(1 + n)) return Status::Corruption("listpack entry past the end");
      iv = SignExtend(GetLE(p + 1, n), 8 * n);
      hdr = 1 + n;
    } else {
      return Status::Corruption("invalid listpack entry encoding");
    }
    size_t entry = hdr + len;
    if (len > avail || entry > avail) return Status::Corruption("listpack entry past the end");
    size_t bl = BacklenSize(entry);
    if (entry + bl > avail) return Status::Corruption("listpack entry past the end");
    // The backlen must decode to the entry size (read backwards from its last byte).
    uint64_t back = 0;
    const uint8_t* q = p + entry + bl - 1;
    for (size_t i = 0; i < bl; i++, q--) back |= static_cast<uint64_t>(*q & 127) << (7 * i);
    if (back != entry) return Status::Corruption("listpack backlen mismatch");
    std::string_view s;
    if (is_int) {
      size_t n = static_cast<size_t>(snprintf(num, sizeof(num), "%lld", static_cast<long long>(iv)));
      s = std::string_view(num, n);
    } else {
      s = std::string_view(reinterpret_cast<const char*>(p + hdr), len);
    }
    Status st = fn(s);
    if (!st.ok()) return st;
    pos += entry + bl;
    count++;
  }
  if (declared != 65535 && declared != count) {
    return Status::Corruption("listpack element count mismatch");
  }
  return Status::Ok();
}

}  // namespace kv::persist
