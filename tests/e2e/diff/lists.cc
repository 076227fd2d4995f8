// Generators for the list commands. (Being written.)
#include "tests/e2e/diff/gen.h"

namespace kv::test {

void AddListGens(GenTable* t) {}

}  // namespace kv::test
