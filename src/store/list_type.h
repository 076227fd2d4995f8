// The list value type. (Being written.)
#pragma once

#include "store/value.h"
