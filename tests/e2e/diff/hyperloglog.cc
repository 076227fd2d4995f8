// Generators for the HyperLogLog commands: PFADD of small and large batches (so HLLs go from
// sparse to dense), PFCOUNT of one key and of several, PFMERGE, PFDEBUG, and GET of the bytes
// (which must be Redis' exactly).
#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

std::string HllKey(Gen& g) { return g.Chance(85) ? "hll" + std::to_string(g.Pick(3)) : g.Key(); }

}  // namespace

void AddHyperLogLogGens(GenTable* t) {
  t->gens.insert(t->gens.end(),
                 {
                     {8,
                      [](Gen& g) {
                        Args a{"PFADD", HllKey(g)};
                        size_t n = g.Chance(20) ? 200 + g.Pick(300) : g.Pick(6);
                        for (size_t i = 0; i < n; i++)
                          a.push_back("e" + std::to_string(g.Pick(5000)));
                        return a;
                      }},
                     {4,
                      [](Gen& g) {
                        return Args{"PFCOUNT", HllKey(g)};
                      }},
                     {2,
                      [](Gen& g) {
                        return Args{"PFCOUNT", HllKey(g), HllKey(g), HllKey(g)};
                      }},
                     {2,
                      [](Gen& g) {
                        return Args{"PFMERGE", HllKey(g), HllKey(g), HllKey(g)};
                      }},
                     {2,
                      [](Gen& g) {
                        return Args{"GET", HllKey(g)};
                      }},
                     {1,
                      [](Gen& g) {
                        static const char* kSubs[] = {"ENCODING", "DECODE", "TODENSE", "nope"};
                        return Args{"PFDEBUG", kSubs[g.Pick(std::size(kSubs))], HllKey(g)};
                      }},
                 });
}

}  // namespace kv::test
