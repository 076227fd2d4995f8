// Fuzz target for the RDB loader and the RESTORE payload reader: any bytes must give a value or
// an error, never a crash, a hang, an out-of-bounds access or a huge allocation.
//
// Built two ways: with clang's libFuzzer (`make fuzz`, scripts/fuzz.sh) and, in the normal
// build, linked with replay_main.cc, which feeds it thousands of corrupted snapshots (a ctest).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "persist/dump.h"
#include "persist/rdb_loader.h"
#include "persist/sink.h"
#include "store/keyspace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  {
    kv::store::Keyspace ks(16);
    kv::persist::MemorySource src(bytes);
    kv::persist::RdbLoadOptions opts;
    opts.verify_checksum = false;  // let mutated files reach the parser
    kv::persist::RdbLoadResult res;
    (void)kv::persist::LoadRdb(src, ks, opts, &res);
  }
  // The same bytes as a RESTORE payload body (the footer is not checked here).
  if (size >= 10) {
    kv::store::EncodingLimits limits;
    (void)kv::persist::RestoreValue(bytes, limits);
  }
  return 0;
}
