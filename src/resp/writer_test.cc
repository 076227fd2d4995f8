#include "resp/writer.h"

#include <gtest/gtest.h>

namespace kv::resp {
namespace {

TEST(ReplyWriter, Resp2Framing) {
  std::string out;
  ReplyWriter w(&out, 2);
  w.Null();
  w.NullArray();
  w.Map(1);
  w.Set(2);
  w.Double(1.5);
  w.Bool(true);
  w.Int(-3);
  EXPECT_EQ(out, "$-1\r\n*-1\r\n*2\r\n*2\r\n$3\r\n1.5\r\n:1\r\n:-3\r\n");
}

TEST(ReplyWriter, Resp3Framing) {
  std::string out;
  ReplyWriter w(&out, 3);
  w.Null();
  w.Map(1);
  w.Set(2);
  w.Double(1.5);
  w.Bool(false);
  w.Push(3);
  w.Verbatim("hi");
  EXPECT_EQ(out, "_\r\n%1\r\n~2\r\n,1.5\r\n#f\r\n>3\r\n=6\r\ntxt:hi\r\n");
}

TEST(ReplyWriter, ErrorsGetCodes) {
  std::string out;
  ReplyWriter w(&out);
  w.Error("syntax error");
  w.Error("-WRONGTYPE Operation against a key holding the wrong kind of value");
  w.Error("bad\r\nline");
  EXPECT_EQ(out,
            "-ERR syntax error\r\n"
            "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
            "-ERR bad  line\r\n");
  EXPECT_EQ(w.errors(), 3u);
  EXPECT_EQ(w.last_error_code(), "ERR");
  w.Error("-WRONGTYPE x");
  EXPECT_EQ(w.last_error_code(), "WRONGTYPE");
}

}  // namespace
}  // namespace kv::resp
