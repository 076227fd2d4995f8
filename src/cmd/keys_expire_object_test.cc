// In-process tests of the EXPIRE family (expire.cc: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, TTL,
// PTTL, EXPIRETIME, PEXPIRETIME, PERSIST) and OBJECT, on keys created directly in the keyspace
// with time fixed by set_now_ms.
#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "cmd/command_test_util.h"
#include "cmd/errors.h"
#include "cmd/keys_test_util.h"
#include "common/clock.h"

namespace kv::cmd {
namespace {

using namespace keys_test_util;

// ---- EXPIRE family -------------------------------------------------------------------------

using ExpireCommands = KeysFixture;

TEST_F(ExpireCommands, RelativeExpiresSetTtlAndPropagateAbsolutePexpireat) {
  Put("k", "v");
  EXPECT_EQ(r.Run({"expire", "k", "100"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 100'000);
  EXPECT_EQ(Props(), (std::vector<std::string>{"PEXPIREAT", "k", std::to_string(kNow + 100'000)}));
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"expire", "k"}}));
  EXPECT_EQ(r.Run({"pexpire", "k", "1500", "xx"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 1500);
  EXPECT_EQ(Props(),
            (std::vector<std::string>{"PEXPIREAT", "k", std::to_string(kNow + 1500), "xx"}));
}

TEST_F(ExpireCommands, AbsoluteExpires) {
  Put("k", "v");
  int64_t at_s = kNow / 1000 + 50;
  EXPECT_EQ(r.Run({"expireat", "k", std::to_string(at_s)}), Int(1));
  EXPECT_EQ(ExpireOf("k"), at_s * 1000);
  EXPECT_EQ(Props(), (std::vector<std::string>{"PEXPIREAT", "k", std::to_string(at_s * 1000)}));
  EXPECT_EQ(r.Run({"pexpireat", "k", std::to_string(kNow + 1)}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 1);
  EXPECT_EQ(Props(), (std::vector<std::string>{"pexpireat", "k", std::to_string(kNow + 1)}));
  EXPECT_EQ(r.Run({"expire", "missing", "10"}), Int(0));
  EXPECT_TRUE(Props().empty());
}

TEST_F(ExpireCommands, TimeInThePastDeletesAndPropagatesDel) {
  Put("a", "v");
  Put("b", "v");
  Put("c", "v");
  EXPECT_EQ(r.Run({"expire", "a", "-1"}), Int(1));
  EXPECT_EQ(r.ks.db(0).Find("a"), nullptr);
  EXPECT_EQ(Props(), (std::vector<std::string>{"DEL", "a"}));
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"del", "a"}}));
  EXPECT_EQ(r.Run({"expireat", "b", "0"}), Int(1));
  EXPECT_EQ(r.ks.db(0).Find("b"), nullptr);
  EXPECT_EQ(r.Run({"pexpireat", "c", std::to_string(kNow)}), Int(1));  // now counts as past
  EXPECT_EQ(r.ks.db(0).Find("c"), nullptr);
  EXPECT_EQ(Props(), (std::vector<std::string>{"DEL", "c"}));
}

TEST_F(ExpireCommands, NxXxGtLtConditions) {
  Put("k", "v");  // no TTL: NX and LT succeed, XX and GT fail
  EXPECT_EQ(r.Run({"expire", "k", "100", "xx"}), Int(0));
  EXPECT_EQ(r.Run({"expire", "k", "100", "gt"}), Int(0));
  EXPECT_TRUE(Props().empty());
  EXPECT_EQ(r.Run({"expire", "k", "100", "lt"}), Int(1));
  EXPECT_EQ(r.Run({"expire", "k", "200", "NX"}), Int(0));  // now it has a TTL
  EXPECT_EQ(ExpireOf("k"), kNow + 100'000);
  EXPECT_EQ(r.Run({"expire", "k", "100", "gt"}), Int(0));  // equal is not greater
  EXPECT_EQ(r.Run({"expire", "k", "100", "lt"}), Int(0));  // equal is not less
  EXPECT_EQ(r.Run({"expire", "k", "200", "gt", "xx"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 200'000);
  EXPECT_EQ(r.Run({"expire", "k", "300", "lt"}), Int(0));
  EXPECT_EQ(r.Run({"expire", "k", "50", "LT", "XX"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), kNow + 50'000);
  Put("n", "v");
  EXPECT_EQ(r.Run({"expire", "n", "10", "nx"}), Int(1));
  EXPECT_EQ(ExpireOf("n"), kNow + 10'000);
}

TEST_F(ExpireCommands, OptionAndNumberErrors) {
  Put("k", "v");
  const std::string incompatible =
      "NX and XX, GT or LT options at the same time are not compatible";
  EXPECT_EQ(r.Run({"expire", "k", "10", "nx", "xx"}), Err(incompatible));
  EXPECT_EQ(r.Run({"expire", "k", "10", "gt", "nx"}), Err(incompatible));
  EXPECT_EQ(r.Run({"expire", "k", "10", "nx", "lt"}), Err(incompatible));
  EXPECT_EQ(r.Run({"expire", "k", "10", "gt", "lt"}),
            Err("GT and LT options at the same time are not compatible"));
  EXPECT_EQ(r.Run({"expire", "k", "10", "foo"}), Err("Unsupported option foo"));
  EXPECT_EQ(r.Run({"expire", "k", "x", "foo"}), Err("Unsupported option foo"));  // options first
  EXPECT_EQ(r.Run({"expire", "k", "1.5"}), Err("value is not an integer or out of range"));
  EXPECT_EQ(r.Run({"expire", "nokey", "x"}), Err("value is not an integer or out of range"));
  EXPECT_EQ(r.Run({"expire", "k", "9223372036854775807"}),
            Err("invalid expire time in 'expire' command"));
  EXPECT_EQ(r.Run({"expire", "k", "-9223372036854775808"}),
            Err("invalid expire time in 'expire' command"));
  EXPECT_EQ(r.Run({"pexpire", "k", "9223372036854775807"}),
            Err("invalid expire time in 'pexpire' command"));
  EXPECT_EQ(r.Run({"expireat", "k", "9223372036854775807"}),
            Err("invalid expire time in 'expireat' command"));
  EXPECT_EQ(r.Run({"expire", "k"}), Err("wrong number of arguments for 'expire' command"));
  EXPECT_EQ(ExpireOf("k"), -1);
  EXPECT_EQ(r.Run({"pexpireat", "k", "9223372036854775807"}), Int(1));  // no overflow
  EXPECT_EQ(ExpireOf("k"), INT64_MAX);
}

TEST_F(ExpireCommands, TtlFamilyAndTimePassing) {
  EXPECT_EQ(r.Run({"ttl", "missing"}), Int(-2));
  EXPECT_EQ(r.Run({"pttl", "missing"}), Int(-2));
  EXPECT_EQ(r.Run({"expiretime", "missing"}), Int(-2));
  EXPECT_EQ(r.Run({"pexpiretime", "missing"}), Int(-2));
  Put("p", "v");
  EXPECT_EQ(r.Run({"ttl", "p"}), Int(-1));
  EXPECT_EQ(r.Run({"pttl", "p"}), Int(-1));
  EXPECT_EQ(r.Run({"expiretime", "p"}), Int(-1));
  EXPECT_EQ(r.Run({"pexpiretime", "p"}), Int(-1));
  PutWithTtl("k", "v", kNow + 1500);
  EXPECT_EQ(r.Run({"pttl", "k"}), Int(1500));
  EXPECT_EQ(r.Run({"ttl", "k"}), Int(2));  // rounded to the nearest second
  EXPECT_EQ(r.Run({"pexpiretime", "k"}), Int(kNow + 1500));
  EXPECT_EQ(r.Run({"expiretime", "k"}), Int((kNow + 1500 + 500) / 1000));
  r.set_now_ms(kNow + 1);
  EXPECT_EQ(r.Run({"ttl", "k"}), Int(1));  // 1499 ms rounds down
  r.set_now_ms(kNow + 1499);
  EXPECT_EQ(r.Run({"pttl", "k"}), Int(1));
  r.set_now_ms(kNow + 1500);
  EXPECT_EQ(r.Run({"pttl", "k"}), Int(-2));
  EXPECT_EQ(r.ks.db(0).Find("k"), nullptr);
  EXPECT_EQ(r.Run({"ttl"}), Err("wrong number of arguments for 'ttl' command"));
}

TEST_F(ExpireCommands, PersistRemovesTtl) {
  PutWithTtl("k", "v", kNow + 100);
  Put("p", "v");
  PutWithTtl("gone", "v", kNow - 1);
  EXPECT_EQ(r.Run({"persist", "k"}), Int(1));
  EXPECT_EQ(ExpireOf("k"), -1);
  EXPECT_EQ(r.hooks.events, (std::vector<Event>{{"persist", "k"}}));
  EXPECT_EQ(Props(), (std::vector<std::string>{"persist", "k"}));
  EXPECT_EQ(r.Run({"persist", "k"}), Int(0));
  EXPECT_TRUE(Props().empty());
  EXPECT_EQ(r.Run({"persist", "p"}), Int(0));
  EXPECT_EQ(r.Run({"persist", "missing"}), Int(0));
  EXPECT_EQ(r.Run({"persist", "gone"}), Int(0));
  EXPECT_EQ(r.ks.db(0).Find("gone"), nullptr);
}

// ---- OBJECT --------------------------------------------------------------------------------

using ObjectCommand = KeysFixture;

TEST_F(ObjectCommand, EncodingOfEachRepresentation) {
  Put("i", "12345");
  Put("e", "short string");
  Put("r", std::string(45, 'x'));
  r.ks.Set(0, "l", List({}));
  EXPECT_EQ(r.Run({"object", "encoding", "i"}), Bulk("int"));
  EXPECT_EQ(r.Run({"OBJECT", "ENCODING", "e"}), Bulk("embstr"));
  EXPECT_EQ(r.Run({"object", "encoding", "r"}), Bulk("raw"));
  EXPECT_EQ(r.Run({"object", "encoding", "l"}), Bulk("quicklist"));
  EXPECT_EQ(r.Run({"object", "encoding", "missing"}), kNull);
  EXPECT_TRUE(r.hooks.events.empty());  // OBJECT raises no keymiss event
}

TEST_F(ObjectCommand, RefCountReportsSharedIntegers) {
  Put("zero", "0");
  Put("small", "9999");
  Put("big", "10000");
  Put("neg", "-1");
  Put("str", "abc");
  EXPECT_EQ(r.Run({"object", "refcount", "zero"}), Int(INT_MAX));
  EXPECT_EQ(r.Run({"object", "refcount", "small"}), Int(INT_MAX));
  EXPECT_EQ(r.Run({"object", "refcount", "big"}), Int(1));
  EXPECT_EQ(r.Run({"object", "refcount", "neg"}), Int(1));
  EXPECT_EQ(r.Run({"object", "refcount", "str"}), Int(1));
  EXPECT_EQ(r.Run({"object", "refcount", "missing"}), kNull);
}

TEST_F(ObjectCommand, IdleTimeIsNotResetByIntrospection) {
  store::Entry* e = Put("k", "v");
  e->access = static_cast<uint32_t>(WallMs() / 1000 - 100);
  auto idle = [&] { return std::stoll(r.Run({"object", "idletime", "k"}).substr(1)); };
  EXPECT_GE(idle(), 100);
  EXPECT_LE(idle(), 101);
  r.Run({"type", "k"});
  r.Run({"exists", "k"});
  r.Run({"ttl", "k"});
  r.Run({"object", "encoding", "k"});
  EXPECT_GE(idle(), 100);
  r.Run({"touch", "k"});
  EXPECT_LE(idle(), 1);
  EXPECT_EQ(r.Run({"object", "idletime", "missing"}), kNull);
  r.ks.set_lfu(true, 10, 0);
  EXPECT_EQ(r.Run({"object", "idletime", "k"}),
            Err("An LFU maxmemory policy is selected, idle time not tracked. Please note that "
                "when switching between policies at runtime LRU and LFU data will take some "
                "time to adjust."));
}

TEST_F(ObjectCommand, FreqNeedsLfuAndIsNotBumpedByIntrospection) {
  Put("k", "v");
  EXPECT_EQ(r.Run({"object", "freq", "k"}),
            Err("An LFU maxmemory policy is not selected, access frequency not tracked. Please "
                "note that when switching between policies at runtime LRU and LFU data will "
                "take some time to adjust."));
  EXPECT_EQ(r.Run({"object", "freq", "missing"}), kNull);  // the lookup comes first
  // No decay, so the counter is exact; new keys start at LFU_INIT_VAL (5).
  r.ks.set_lfu(true, 10, 0);
  Put("f", "v");
  EXPECT_EQ(r.Run({"object", "freq", "f"}), Int(5));
  r.Run({"type", "f"});
  r.Run({"object", "freq", "f"});
  EXPECT_EQ(r.Run({"object", "freq", "f"}), Int(5));
  r.Run({"touch", "f"});  // at the initial value the first hit always counts
  EXPECT_EQ(r.Run({"object", "freq", "f"}), Int(6));
}

TEST_F(ObjectCommand, HelpAndErrors) {
  std::string help = r.Run({"object", "help"});
  EXPECT_EQ(help.substr(0, help.find("\r\n", 5) + 2),
            "*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n");
  EXPECT_NE(help.find("+REFCOUNT <key>\r\n"), std::string::npos);
  const std::string footer = "+HELP\r\n+    Prints this help.\r\n";
  EXPECT_EQ(help.substr(help.size() - footer.size()), footer);
  EXPECT_EQ(r.Run({"object"}), Err("wrong number of arguments for 'object' command"));
  EXPECT_EQ(r.Run({"object", "foo", "k"}), Err("unknown subcommand 'foo'. Try OBJECT HELP."));
  EXPECT_EQ(r.Run({"object", "encoding"}),
            Err("wrong number of arguments for 'object|encoding' command"));
  EXPECT_EQ(r.Run({"object", "help", "x"}),
            Err("wrong number of arguments for 'object|help' command"));
}

}  // namespace
}  // namespace kv::cmd
