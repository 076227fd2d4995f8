#include <gtest/gtest.h>

#include "cmd/command_test_util.h"
