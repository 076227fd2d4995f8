// The random-member commands (SRANDMEMBER, SPOP, HRANDFIELD, ZRANDMEMBER, RANDOMKEY) pick every
// member equally often, on every encoding and in each of their strategies: a negative count
// (picks that may repeat), a positive count well below the size (distinct picks), a count near
// the size (a copy that loses random members) and no count. Each check draws some thousands of
// members from a 10-member value and bounds Pearson's chi-square statistic, as Redis' own tests
// do: below 40 for 9 degrees of freedom, which a uniform sampler exceeds with probability about
// 1e-5 (and a check over it draws once more: see ExpectUniform). Each check builds its value with
// members of its own, so the hash tables' layouts differ from check to check. redis-server runs
// the same checks, as a check of the tests themselves. KV_CHI_SQUARE_LOG=1 prints every statistic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Cmd = std::vector<std::string>;
using Kind = ServerProcess::Kind;

constexpr double kBound9 = 40;  // for 10 members: 9 degrees of freedom

struct Server {
  explicit Server(Kind k) : kind(k), proc(k), c(proc.port()) {}
  const char* name() const { return kind == Kind::kKvstore ? "kvstore" : "redis-server"; }
  Kind kind;
  ServerProcess proc;
  RespClient c;
};

// Sends `cmds` pipelined, a batch at a time (so that neither side's socket buffer fills up while
// the other waits), and returns the replies in order.
std::vector<Reply> Pipeline(RespClient& c, const std::vector<Cmd>& cmds) {
  constexpr size_t kBatch = 64;
  std::vector<Reply> out;
  out.reserve(cmds.size());
  for (size_t i = 0; i < cmds.size(); i += kBatch) {
    size_t end = std::min(cmds.size(), i + kBatch);
    std::string bytes;
    for (size_t j = i; j < end; j++) bytes += RespClient::Encode(cmds[j]);
    c.SendRaw(bytes);
    for (size_t j = i; j < end; j++) out.push_back(c.Read());
  }
  return out;
}

// Pearson's statistic of `picks` against the uniform distribution over `members`: the sum over
// members of (observed - expected)^2 / expected. A pick that is not a member fails the test;
// `unpicked` (when given) receives how many members never came up.
double ChiSquare(const std::vector<std::string>& picks, const std::vector<std::string>& members,
                 size_t* unpicked = nullptr) {
  std::map<std::string, int64_t> hist;
  for (const std::string& m : members) hist[m] = 0;
  for (const std::string& p : picks) {
    auto it = hist.find(p);
    if (it == hist.end()) {
      ADD_FAILURE() << "not a member: " << p;
      continue;
    }
    it->second++;
  }
  const double expected = static_cast<double>(picks.size()) / members.size();
  double chi = 0;
  size_t zero = 0;
  for (const auto& [m, n] : hist) {
    chi += (n - expected) * (n - expected) / expected;
    zero += n == 0;
  }
  if (unpicked) *unpicked = zero;
  return chi;
}

std::string Describe(const Cmd& cmd) {
  std::string out;
  for (const std::string& a : cmd) out += (out.empty() ? "" : " ") + a;
  return out;
}

// The members `replies` name (fields, not values), checking that each names `len` of them (or is
// one bulk string when len is 0) and, for `distinct`, that none repeats one. Stops at the first
// bad reply: one failure says enough.
std::vector<std::string> Names(const std::vector<Reply>& replies, const Cmd& cmd, size_t len,
                               bool distinct) {
  std::vector<std::string> picks;
  for (const Reply& r : replies) {
    if (len == 0 && r.type == '$') {
      picks.push_back(r.str);
      continue;
    }
    std::set<std::string> seen;
    for (const Reply& m : r.elems) {
      picks.push_back(m.str);
      seen.insert(m.str);
    }
    if (len == 0 || r.type != '*' || r.elems.size() != len || (distinct && seen.size() != len)) {
      ADD_FAILURE() << Describe(cmd) << " answered " << r.Debug().substr(0, 500);
      break;
    }
  }
  return picks;
}

// Expects `draw` to pick `members` uniformly: the statistic of what it draws stays below `bound`.
// A statistic over the bound is drawn anew once, so a uniform sampler fails only by exceeding it
// twice in a row (about 1e-10 for 10 members) while a biased one exceeds it every time. With
// `check` false the statistic is only logged (KV_CHI_SQUARE_LOG set logs every one); `unpicked`
// receives how many members never came up.
void ExpectUniform(const std::function<std::vector<std::string>()>& draw,
                   const std::vector<std::string>& members, double bound, const std::string& what,
                   bool check = true, size_t* unpicked = nullptr) {
  std::string seen;
  for (int attempt = 0; attempt < 2; attempt++) {
    double chi = ChiSquare(draw(), members, unpicked);
    if (std::getenv("KV_CHI_SQUARE_LOG")) std::cout << "chi2 " << chi << "\t" << what << "\n";
    if (!check || chi < bound) return;
    seen += (seen.empty() ? "" : ", then ") + std::to_string(chi);
  }
  ADD_FAILURE() << what << ": chi-square " << seen << " (bound " << bound << ")";
}

enum class Type { kSet, kHash, kZset };

// A value's type and encoding, and how to get it: the size limits to configure before it is
// created, and whether its members are integers (for an intset).
struct Encoding {
  Type type;
  std::string name;  // what OBJECT ENCODING answers
  bool small;        // the listpack/intset limits at 128; otherwise at 0
  bool ints;
};

const std::vector<Encoding>& Encodings(Type type) {
  static const std::vector<Encoding> sets = {{Type::kSet, "intset", true, true},
                                             {Type::kSet, "hashtable", true, false},
                                             {Type::kSet, "hashtable", false, true}};
  static const std::vector<Encoding> hashes = {{Type::kHash, "listpack", true, false},
                                               {Type::kHash, "hashtable", false, false}};
  static const std::vector<Encoding> zsets = {{Type::kZset, "listpack", true, false},
                                              {Type::kZset, "skiplist", false, false}};
  return type == Type::kSet ? sets : type == Type::kHash ? hashes : zsets;
}

const char* RandCommand(Type type) {
  return type == Type::kSet ? "SRANDMEMBER" : type == Type::kHash ? "HRANDFIELD" : "ZRANDMEMBER";
}

class RandomSampling : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    servers_ = new std::vector<std::unique_ptr<Server>>;
    servers_->push_back(std::make_unique<Server>(Kind::kKvstore));
    if (HaveRedisServer()) servers_->push_back(std::make_unique<Server>(Kind::kRedis));
  }
  static void TearDownTestSuite() {
    delete servers_;
    servers_ = nullptr;
  }
  void SetUp() override {
    for (auto& s : *servers_) ASSERT_EQ(s->c.Raw({"FLUSHALL"}), "+OK\r\n");
  }

  static std::vector<std::unique_ptr<Server>>& servers() { return *servers_; }

  // `n` members no other check uses (integers for an intset), so each value hashes anew.
  static std::vector<std::string> Members(size_t n, bool ints) {
    std::vector<std::string> out;
    salt_++;
    for (size_t i = 0; i < n; i++) {
      out.push_back(ints ? std::to_string(salt_ * 100000 + i)
                         : "m" + std::to_string(salt_) + "-" + std::to_string(i));
    }
    return out;
  }

  // The command that creates `key` with `members` as a value of encoding `e`.
  static Cmd Create(const Encoding& e, const std::string& key,
                    const std::vector<std::string>& members) {
    Cmd cmd = {e.type == Type::kSet ? "SADD" : e.type == Type::kHash ? "HSET" : "ZADD", key};
    for (size_t i = 0; i < members.size(); i++) {
      if (e.type == Type::kHash) cmd.insert(cmd.end(), {members[i], "v" + std::to_string(i)});
      if (e.type == Type::kZset) cmd.insert(cmd.end(), {std::to_string(i), members[i]});
      if (e.type == Type::kSet) cmd.push_back(members[i]);
    }
    return cmd;
  }

  // Creates `key` on `s` with encoding `e` and checks that the encoding is the one meant.
  static void Build(Server& s, const Encoding& e, const std::string& key,
                    const std::vector<std::string>& members) {
    const std::string limit = e.small ? "128" : "0";
    for (const char* name :
         {"set-max-intset-entries", "hash-max-listpack-entries", "zset-max-listpack-entries"}) {
      ASSERT_EQ(s.c.Raw({"CONFIG", "SET", name, limit}), "+OK\r\n");
    }
    ASSERT_EQ(s.c.Call(Create(e, key, members)).integer, static_cast<int64_t>(members.size()));
    ASSERT_EQ(s.c.Call({"OBJECT", "ENCODING", key}).str, e.name) << key;
  }

  // Runs `cmd` `calls` times and returns every member the replies name (see Names).
  static std::vector<std::string> Draw(Server& s, const Cmd& cmd, int calls, size_t len,
                                       bool distinct) {
    return Names(Pipeline(s.c, std::vector<Cmd>(calls, cmd)), cmd, len, distinct);
  }

  // Every strategy of `type`'s random-member command on each of its encodings, on 10 members:
  // a negative count, a count whose triple is below the size (distinct random picks), one whose
  // triple is above it (a copy losing random members), no count, and a count covering the value.
  static void CheckRandCommand(Type type) {
    for (auto& sp : servers()) {
      Server& s = *sp;
      for (const Encoding& e : Encodings(type)) {
        const std::vector<std::string> members = Members(10, e.ints);
        const std::string key = "k" + std::to_string(salt_);
        Build(s, e, key, members);
        const std::string what = std::string(s.name()) + " " + RandCommand(type) + " " + e.name +
                                 (e.ints ? " (integers)" : "");
        // Calls per strategy: about 5000 members drawn, 500 expected for each.
        for (const auto& [count, calls] :
             std::vector<std::pair<int, int>>{{-100, 50}, {3, 1700}, {6, 850}, {0, 5000}}) {
          Cmd cmd = {RandCommand(type), key};
          if (count != 0) cmd.push_back(std::to_string(count));
          ExpectUniform([&] { return Draw(s, cmd, calls, std::abs(count), count > 0); }, members,
                        kBound9, what + " count " + (count ? std::to_string(count) : "none"));
        }
        for (int count : {10, 15}) {
          std::vector<std::string> all =
              Draw(s, {RandCommand(type), key, std::to_string(count)}, 1, 10, true);
          std::sort(all.begin(), all.end());
          std::vector<std::string> want = members;
          std::sort(want.begin(), want.end());
          EXPECT_EQ(all, want) << what << " count " << count;
        }
        ASSERT_EQ(s.c.Call({"OBJECT", "ENCODING", key}).str, e.name) << what;
      }
    }
  }

  inline static std::vector<std::unique_ptr<Server>>* servers_ = nullptr;
  inline static int salt_ = 0;
};

TEST_F(RandomSampling, SrandmemberIsUniformOnEveryEncoding) { CheckRandCommand(Type::kSet); }

TEST_F(RandomSampling, HrandfieldIsUniformOnEveryEncoding) { CheckRandCommand(Type::kHash); }

TEST_F(RandomSampling, ZrandmemberIsUniformOnEveryEncoding) { CheckRandCommand(Type::kZset); }

// SPOP with and without a count pops each member equally often: the set is refilled before each
// pop, and a count of 9 takes the strategy that moves the one member left to a new set.
TEST_F(RandomSampling, SpopIsUniformOnEveryEncoding) {
  for (auto& sp : servers()) {
    Server& s = *sp;
    for (const Encoding& e : Encodings(Type::kSet)) {
      for (const auto& [count, calls] :
           std::vector<std::pair<int, int>>{{0, 5000}, {3, 1700}, {9, 560}}) {
        const std::vector<std::string> members = Members(10, e.ints);
        const std::string key = "k" + std::to_string(salt_);
        Build(s, e, key, members);
        const std::string what = std::string(s.name()) + " SPOP " + e.name +
                                 (e.ints ? " (integers)" : "") + " count " +
                                 (count ? std::to_string(count) : "none");
        Cmd spop = {"SPOP", key};
        if (count) spop.push_back(std::to_string(count));
        std::vector<Cmd> cmds;
        for (int i = 0; i < calls; i++) cmds.insert(cmds.end(), {Create(e, key, members), spop});
        auto draw = [&] {
          std::vector<Reply> replies = Pipeline(s.c, cmds), pops;
          for (size_t i = 1; i < replies.size(); i += 2) pops.push_back(std::move(replies[i]));
          return Names(pops, spop, count, true);
        };
        ExpectUniform(draw, members, kBound9, what);
        // After the last pop the set holds what that pop left.
        EXPECT_EQ(s.c.Call({"SCARD", key}).integer, 10 - count + (count == 0 ? -1 : 0)) << what;
      }
    }
  }
}

// RANDOMKEY picks each key of the database equally often.
TEST_F(RandomSampling, RandomKeyIsUniform) {
  for (auto& sp : servers()) {
    Server& s = *sp;
    const std::vector<std::string> keys = Members(10, false);
    for (const std::string& k : keys) ASSERT_EQ(s.c.Raw({"SET", k, "v"}), "+OK\r\n");
    ExpectUniform([&] { return Draw(s, {"RANDOMKEY"}, 5000, 0, false); }, keys, kBound9,
                  std::string(s.name()) + " RANDOMKEY");
  }
}

// On a 1000-member hash table every member comes up and the distribution is close to uniform:
// the statistic stays below df + 10 * sqrt(2 * df), ten standard deviations above its mean.
// redis-server only has to cover the members: its dictGetFairRandomKey picks among ~15
// neighbouring entries, which is not fair at this size (its statistics are 5000 to 9000 here).
TEST_F(RandomSampling, LargeValuesSampleEveryMember) {
  const double df = 999;
  const double bound = df + 10 * std::sqrt(2 * df);
  for (auto& sp : servers()) {
    Server& s = *sp;
    const bool fair = s.kind == Kind::kKvstore;
    for (Type type : {Type::kSet, Type::kHash, Type::kZset}) {
      const Encoding& e = Encodings(type).back();
      const std::vector<std::string> members = Members(1000, e.ints);
      const std::string key = "k" + std::to_string(salt_);
      Build(s, e, key, members);
      const std::string what = std::string(s.name()) + " " + RandCommand(type) + " " + e.name;
      // 100 expected for each member: with a negative count, and with distinct picks.
      for (const auto& [count, calls] :
           std::vector<std::pair<int, int>>{{-1000, 100}, {10, 10000}}) {
        const Cmd cmd = {RandCommand(type), key, std::to_string(count)};
        size_t unpicked;
        ExpectUniform([&] { return Draw(s, cmd, calls, std::abs(count), count > 0); }, members,
                      bound, what + " 1000 members count " + std::to_string(count), fair,
                      &unpicked);
        EXPECT_EQ(unpicked, 0u) << what << " count " << count;
      }
    }
    const std::vector<std::string> keys = Members(1000, false);
    std::vector<Cmd> sets;
    for (const std::string& k : keys) sets.push_back({"SET", k, "v"});
    Pipeline(s.c, sets);
    auto draw = [&] {
      std::vector<std::string> picks = Draw(s, {"RANDOMKEY"}, 100000, 0, false);
      // The three collections are keys too: drop them from the draw.
      std::erase_if(picks, [](const std::string& k) { return k[0] == 'k'; });
      return picks;
    };
    size_t unpicked;
    ExpectUniform(draw, keys, bound, std::string(s.name()) + " RANDOMKEY 1000 keys", fair,
                  &unpicked);
    EXPECT_EQ(unpicked, 0u) << s.name() << " RANDOMKEY";
  }
}

}  // namespace
}  // namespace kv::test
