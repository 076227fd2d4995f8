// Runs the cluster bus codec's fuzz target without libFuzzer: well-formed messages of every type
// (random gossip, hostnames, payloads), each mutated where Decode reads lengths and counts,
// fed both as they are and with the signature and totlen made to agree with their length.
// Prints what it ran; the target aborts on a broken invariant.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

#include "cluster/bus_wire.h"
#include "cluster/bus_wire_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern size_t cluster_bus_fuzz_accepted;

int main() {
  using namespace kv::cluster;
  std::mt19937 rng(20240611);
  const int kMessages = 50000;
  for (int i = 0; i < kMessages; i++) {
    std::string in(1, static_cast<char>(rng() & 1));
    in += test_util::MutateBusMessage(Encode(test_util::RandomBusMessage(rng)), rng);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
  }
  printf("cluster bus: %d mutated messages (%zu accepted), every invariant held\n", kMessages,
         cluster_bus_fuzz_accepted);
  return 0;
}
