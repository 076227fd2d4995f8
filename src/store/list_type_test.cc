#include "store/list_type.h"

#include <gtest/gtest.h>
