#include "store/hash_type.h"

#include <gtest/gtest.h>
