// Generators for the hash commands. (Being written.)
#include "tests/e2e/diff/gen.h"

namespace kv::test {

void AddHashGens(GenTable* t) {}

}  // namespace kv::test
