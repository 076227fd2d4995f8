// Generators for the set commands. (Being written.)
#include "tests/e2e/diff/gen.h"

namespace kv::test {

void AddSetGens(GenTable* t) {}

}  // namespace kv::test
