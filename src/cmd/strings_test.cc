#include <gtest/gtest.h>

#include "cmd/command_test_util.h"

namespace kv::cmd {
namespace {

TEST(ConnectionCommands, PingEchoSelect) {
  CommandRunner r;
  EXPECT_EQ(r.Run({"ping"}), "+PONG\r\n");
  EXPECT_EQ(r.Run({"PING", "hi"}), "$2\r\nhi\r\n");
  EXPECT_EQ(r.Run({"ping", "a", "b"}), "-ERR wrong number of arguments for 'ping' command\r\n");
  EXPECT_EQ(r.Run({"echo"}), "-ERR wrong number of arguments for 'echo' command\r\n");
  EXPECT_EQ(r.Run({"select", "15"}), "+OK\r\n");
  EXPECT_EQ(r.session.db, 15);
  EXPECT_EQ(r.Run({"select", "16"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(r.Run({"select", "x"}), "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(r.Run({"nosuch", "a", "b"}),
            "-ERR unknown command 'nosuch', with args beginning with: 'a' 'b' \r\n");
}

}  // namespace
}  // namespace kv::cmd
