#include "store/zset_type.h"

#include <gtest/gtest.h>
