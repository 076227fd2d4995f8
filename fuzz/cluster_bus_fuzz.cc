// The cluster bus codec's fuzz target. The input is a flags byte then a message's bytes; with
// bit 0 set, the signature and totlen are made to agree with the input first, so that the
// fuzzer spends its time on the bodies' checks rather than on finding "RCmb" and the length.
// Whatever happens:
//   - Decode reads nothing outside the input (ASan) and never crashes;
//   - a message it accepts has a length MessageLength agrees with;
//   - an accepted message encodes to bytes that decode to the same message, and encode again
//     to the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cluster/bus_wire.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  fprintf(stderr, "%s: %s\n", what, detail.c_str());
  abort();
}

}  // namespace

// How many inputs Decode accepted (the replay driver reports it).
size_t cluster_bus_fuzz_accepted = 0;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kv::cluster;
  if (size == 0) return 0;
  std::string in(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) && in.size() >= 8) {
    in.replace(0, 4, "RCmb");
    for (int i = 0; i < 4; i++) in[4 + i] = static_cast<char>(in.size() >> (24 - 8 * i));
  }
  kv::Result<BusMessage> m = Decode(in);
  if (!m.ok()) {
    if (m.status().message().empty()) Fail("an error without a message", "");
    return 0;
  }
  cluster_bus_fuzz_accepted++;
  kv::Result<uint32_t> len = MessageLength(in);
  if (!len.ok() || *len != in.size()) Fail("MessageLength disagrees with Decode", "");
  std::string again = Encode(*m);
  kv::Result<BusMessage> m2 = Decode(again);
  if (!m2.ok()) Fail("a decoded message encodes to bytes Decode refuses", m2.status().message());
  if (!(*m2 == *m)) Fail("a decoded message encodes to another message", MsgTypeName(m->hdr.type));
  if (Encode(*m2) != again) Fail("encoding is not stable", MsgTypeName(m->hdr.type));
  return 0;
}
