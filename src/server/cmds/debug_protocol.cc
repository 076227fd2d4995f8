// DEBUG PROTOCOL <type> and DEBUG ERROR <string>: replies of every RESP type, framed exactly as
// Redis 7.0 frames them in RESP2 and RESP3, for client libraries' tests.
#include <string>

#include "common/strutil.h"
#include "server/cmds/debug_cmds.h"

namespace kv::server::debug {

namespace {

void Attribute(cmd::Context& c) {
  // An attribute is no reply of its own: RESP2 clients get only the reply that follows.
  if (c.out.proto() >= 3) {
    c.out.Raw("|1\r\n");
    c.out.Bulk("key-popularity");
    c.out.Array(2);
    c.out.Bulk("key:123");
    c.out.Int(90);
  }
  c.out.Bulk("Some real reply following the attribute");
}

void PushReply(cmd::Context& c) {
  if (c.out.proto() < 3) {
    c.Error("RESP2 is not supported by this command");
    return;
  }
  c.out.Push(2);
  c.out.Bulk("server-cpu-usage");
  c.out.Int(42);
  // A push is not the command's reply: one follows, for clients that wait for it.
  c.out.Bulk("Some real reply following the push reply");
}

}  // namespace

void Protocol(cmd::Context& c) {
  std::string_view name = c.arg(2);
  auto is = [&](std::string_view n) { return EqualsIgnoreCase(name, n); };
  if (is("string")) {
    c.out.Bulk("Hello World");
  } else if (is("integer")) {
    c.out.Int(12345);
  } else if (is("double")) {
    c.out.Double(3.141);
  } else if (is("bignum")) {
    constexpr std::string_view kBig = "1234567999999999999999999999999999999";
    if (c.out.proto() >= 3) {
      c.out.Raw("(" + std::string(kBig) + "\r\n");
    } else {
      c.out.Bulk(kBig);
    }
  } else if (is("null")) {
    c.out.Null();
  } else if (is("array") || is("set")) {
    if (is("array")) {
      c.out.Array(3);
    } else {
      c.out.Set(3);
    }
    for (int j = 0; j < 3; j++) c.out.Int(j);
  } else if (is("map")) {
    c.out.Map(3);
    for (int j = 0; j < 3; j++) {
      c.out.Int(j);
      c.out.Bool(j == 1);
    }
  } else if (is("attrib")) {
    Attribute(c);
  } else if (is("push")) {
    PushReply(c);
  } else if (is("true") || is("false")) {
    c.out.Bool(is("true"));
  } else if (is("verbatim")) {
    c.out.Verbatim("This is a verbatim\nstring", "txt");
  } else {
    c.Error(
        "Wrong protocol type name. Please use one of the following: "
        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
  }
}

// The argument is the whole error line (its code included), newlines made spaces. Written raw,
// as Redis' addReplySds does: INFO errorstats does not count it.
void Error(cmd::Context& c) {
  std::string line = "-" + std::string(c.arg(2));
  for (char& ch : line) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  c.out.Raw(line + "\r\n");
}

}  // namespace kv::server::debug
