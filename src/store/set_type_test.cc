#include "store/set_type.h"

#include <gtest/gtest.h>
