// Generators for the zset commands. (Being written.)
#include "tests/e2e/diff/gen.h"

namespace kv::test {

void AddZsetGens(GenTable* t) {}

}  // namespace kv::test
