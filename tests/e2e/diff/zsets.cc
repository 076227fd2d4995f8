// Generators for the sorted set commands.
//
// Keys: the shared k0..k7 (small sets, and the other families' types, for WRONGTYPE), two big
// keys zbig0/zbig1 filled with up to hundreds of members (some longer than 64 bytes) so they
// reach the skiplist encoding, and zlex, a big set whose scores are all 0. Lexicographic ranges
// are only asked of the shared keys and zlex: over members of different scores a skiplist's
// answer depends on its random levels, so Redis itself is not deterministic there. For the same
// reason a store command writes into a shared key only from shared inputs.
#include <algorithm>
#include <string>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

std::string Pick(Gen& g, std::initializer_list<const char*> options) {
  return *(options.begin() + g.Pick(options.size()));
}

std::string BigKey(Gen& g) { return g.Chance(50) ? "zbig0" : "zbig1"; }

// Any zset-ish key for reads and removals.
std::string AnyKey(Gen& g) {
  size_t r = g.Pick(100);
  if (r < 70) return g.Key();
  if (r < 88) return BigKey(g);
  return "zlex";
}

// Keys whose scores may change freely (never zlex).
std::string ScoredKey(Gen& g) { return g.Chance(80) ? g.Key() : BigKey(g); }

// Keys lexicographic ranges are asked of.
std::string LexKey(Gen& g) { return g.Chance(70) ? g.Key() : "zlex"; }

bool IsShared(const std::string& key) { return key.size() == 2 && key[0] == 'k'; }

std::string Member(Gen& g) {
  if (g.Chance(80)) return g.Member();
  return Pick(g, {"", "+", "-", "[x", "1", "10", "-5", "a b", "\xff", "M", "m", "m1x"});
}

std::string Score(Gen& g) {
  if (g.Chance(8)) return Pick(g, {"abc", "", "nan", " 1", "1x", "(1", "--1"});
  return Pick(g, {"1", "-1", "0", "2.5", "-3.25", "inf", "-inf", "+inf", "1e3", "0.1", "3",
                  "10", "7", "-0", "1e308", "17", "4.5", "0x10", "-2"});
}

std::string ScoreBound(Gen& g) {
  return Pick(g, {"-inf", "+inf", "inf", "(1", "(2.5", "0", "3", "10", "-1", "(-inf", "(inf",
                  "1.5", "(3", "7", "abc", "(", "[1", "", "1e400", "(0"});
}

std::string LexBound(Gen& g) {
  if (g.Chance(30)) {
    return std::string(g.Chance(50) ? "[" : "(") + "lx" + std::to_string(g.Pick(300));
  }
  return Pick(g, {"-", "+", "[m1", "(m5", "[m", "(m11", "[m3", "(m", "[", "(", "[a", "(z",
                  "m3", "", "+x", "-x", "[\xff"});
}

std::string SmallCount(Gen& g) {
  return Pick(g, {"0", "1", "2", "3", "5", "20", "-1", "-3", "abc", "9223372036854775807"});
}

void AddWithScores(Gen& g, Args* a) {
  if (g.Chance(40)) a->push_back(g.Chance(90) ? "WITHSCORES" : "withscores");
}

void AddLimit(Gen& g, Args* a) {
  if (!g.Chance(35)) return;
  a->push_back("LIMIT");
  a->push_back(Pick(g, {"0", "1", "2", "-1", "5", "100", "x"}));
  a->push_back(Pick(g, {"-1", "0", "1", "2", "5", "abc", "-5"}));
}

Args Zadd(Gen& g) {
  Args a{"ZADD", ScoredKey(g)};
  static const char* kOpts[] = {"NX", "XX", "GT", "LT", "CH", "INCR"};
  if (g.Chance(40)) {
    for (size_t n = 1 + g.Pick(2); n > 0; n--) a.push_back(kOpts[g.Pick(std::size(kOpts))]);
  }
  for (size_t n = g.Chance(70) ? 1 : 2 + g.Pick(4); n > 0; n--) {
    a.push_back(Score(g));
    a.push_back(Member(g));
  }
  return a;
}

// Many members at once, some long, so the set passes the listpack limits.
Args FillBig(Gen& g) {
  Args a{"ZADD", BigKey(g)};
  for (size_t n = 30 + g.Pick(50); n > 0; n--) {
    a.push_back(Pick(g, {"1", "2.5", "-3", "0", "100", "7", "-inf", "inf", "0.25", "42"}));
    if (g.Chance(8)) a.push_back(std::string(65 + g.Pick(10), 'L') + std::to_string(g.Pick(9)));
    else a.push_back("b" + std::to_string(g.Pick(300)));
  }
  return a;
}

Args FillLex(Gen& g) {
  Args a{"ZADD", "zlex"};
  for (size_t n = 60 + g.Pick(80); n > 0; n--) {
    a.push_back("0");
    a.push_back("lx" + std::to_string(g.Pick(300)));
  }
  return a;
}

// ZRANGE/ZRANGESTORE options after <min> <max>.
void AddRangeOptions(Gen& g, Args* a, bool lex, bool store) {
  if (lex) a->push_back("BYLEX");
  else if (g.Chance(50)) a->push_back("BYSCORE");
  if (g.Chance(30)) a->push_back("REV");
  if (!store) AddWithScores(g, a);
  AddLimit(g, a);
  if (g.Chance(3)) a->push_back(Pick(g, {"BYSCORE", "BYLEX", "REV", "foo"}));
}

Args Zrange(Gen& g, bool store) {
  bool lex = g.Chance(25);
  std::string src = lex ? LexKey(g) : AnyKey(g);
  Args a{store ? "ZRANGESTORE" : "ZRANGE"};
  if (store) a.push_back(IsShared(src) && g.Chance(70) ? g.Key() : BigKey(g));
  a.push_back(src);
  size_t at = a.size();
  AddRangeOptions(g, &a, lex, store);
  bool by_score = std::find(a.begin(), a.end(), "BYSCORE") != a.end();
  std::string min = lex ? LexBound(g) : by_score ? ScoreBound(g) : g.Int();
  std::string max = lex ? LexBound(g) : by_score ? ScoreBound(g) : g.Int();
  a.insert(a.begin() + at, {min, max});
  return a;
}

Args ByScore(Gen& g, const char* cmd) {
  Args a{cmd, AnyKey(g), ScoreBound(g), ScoreBound(g)};
  AddWithScores(g, &a);
  AddLimit(g, &a);
  return a;
}

Args ByLex(Gen& g, const char* cmd) {
  Args a{cmd, LexKey(g), LexBound(g), LexBound(g)};
  AddLimit(g, &a);
  return a;
}

// ZUNION/ZINTER/ZDIFF[STORE] and ZINTERCARD: numkeys, keys (sorted sets, plain sets, others).
Args SetOp(Gen& g, const std::string& cmd) {
  bool store = cmd.size() > 6 && cmd.substr(cmd.size() - 5) == "STORE";
  bool card = cmd == "ZINTERCARD";
  bool scored = cmd.find("DIFF") == std::string::npos && !card;
  size_t n = 1 + g.Pick(3);
  Args keys;
  bool all_shared = true;
  for (size_t i = 0; i < n; i++) {
    keys.push_back(g.Chance(85) ? g.Key() : AnyKey(g));
    all_shared = all_shared && IsShared(keys.back());
  }
  Args a{cmd};
  if (store) a.push_back(all_shared && g.Chance(80) ? g.Key() : BigKey(g));
  a.push_back(g.Chance(95) ? std::to_string(n) : Pick(g, {"0", "-1", "abc", "9"}));
  a.insert(a.end(), keys.begin(), keys.end());
  if (scored && g.Chance(30)) {
    a.push_back("WEIGHTS");
    for (size_t i = 0; i < n; i++) a.push_back(Pick(g, {"1", "2", "-1", "0", "0.5", "inf", "x"}));
  }
  if (scored && g.Chance(30)) {
    a.push_back("AGGREGATE");
    a.push_back(Pick(g, {"SUM", "MIN", "MAX", "max", "avg"}));
  }
  if (!store && !card) AddWithScores(g, &a);
  if (card && g.Chance(50)) {
    a.push_back("LIMIT");
    a.push_back(Pick(g, {"0", "1", "2", "-1", "x"}));
  }
  return a;
}

Args Zmpop(Gen& g) {
  size_t n = 1 + g.Pick(3);
  Args a{"ZMPOP", g.Chance(95) ? std::to_string(n) : Pick(g, {"0", "-1", "abc", "9"})};
  for (size_t i = 0; i < n; i++) a.push_back(AnyKey(g));
  a.push_back(Pick(g, {"MIN", "MAX", "min", "max", "mid"}));
  if (g.Chance(50)) {
    a.push_back("COUNT");
    a.push_back(Pick(g, {"1", "2", "5", "0", "-1", "x", "100"}));
  }
  return a;
}

Args Zrandmember(Gen& g) {
  Args a{"ZRANDMEMBER", AnyKey(g)};
  if (!g.Chance(70)) return a;
  bool withscores = g.Chance(40);
  // No huge negative count that Redis would try to answer (the harness may drop WITHSCORES).
  a.push_back(Pick(g, {"0", "1", "2", "5", "-1", "-3", "-10", "200", "x", "-9223372036854775808",
                       "9223372036854775807"}));
  if (withscores) a.push_back(g.Chance(95) ? "WITHSCORES" : "foo");
  return a;
}

// A full ZSCAN in one call (COUNT larger than any set here), with MATCH now and then.
Args Zscan(Gen& g) {
  Args a{"ZSCAN", AnyKey(g), g.Chance(95) ? "0" : Pick(g, {"abc", "-1", " 0", ""})};
  if (g.Chance(30)) {
    a.push_back("MATCH");
    a.push_back(Pick(g, {"m1*", "*", "b?", "lx1*", "[a-m]*"}));
  }
  // Always a COUNT: a skiplist of COUNT or more members may need more than one call.
  a.push_back("COUNT");
  a.push_back(g.Chance(90) ? "1000" : Pick(g, {"0", "x", "-1"}));
  return a;
}

// A scan started at cursor 0 that answers cursor 0 is complete: its pairs are compared in any
// order. Partial scans, and scans started elsewhere, depend on each server's hash table layout.
std::string ScanPairs(const Args& cmd, const Reply& r) {
  if (r.type == '-' || r.elems.size() != 2) return r.raw;
  bool from_start = cmd.size() > 2 && (cmd[2] == "0" || cmd[2].empty());
  if (!from_start || r.elems[0].str != "0") return "partial scan";
  return "scan:" + SortedPairs(cmd, r.elems[1]);
}

}  // namespace

void AddZsetGens(GenTable* t) {
  t->gens.insert(t->gens.end(), {
      {12, Zadd},
      {3, FillBig},
      {2, FillLex},
      {3, [](Gen& g) { return Args{"ZINCRBY", ScoredKey(g), Score(g), Member(g)}; }},
      {4, [](Gen& g) { return Args{"ZREM", AnyKey(g), Member(g), Member(g)}; }},
      {4, [](Gen& g) { return Args{"ZSCORE", AnyKey(g), Member(g)}; }},
      {2, [](Gen& g) { return Args{"ZMSCORE", AnyKey(g), Member(g), Member(g), "b7"}; }},
      {3, [](Gen& g) { return Args{"ZCARD", AnyKey(g)}; }},
      {3, [](Gen& g) { return Args{"ZCOUNT", AnyKey(g), ScoreBound(g), ScoreBound(g)}; }},
      {3, [](Gen& g) { return Args{"ZLEXCOUNT", LexKey(g), LexBound(g), LexBound(g)}; }},
      {8, [](Gen& g) { return Zrange(g, false); }},
      {3, [](Gen& g) { return Zrange(g, true); }},
      {3, [](Gen& g) { return ByScore(g, "ZRANGEBYSCORE"); }},
      {3, [](Gen& g) { return ByScore(g, "ZREVRANGEBYSCORE"); }},
      {3, [](Gen& g) { return ByLex(g, "ZRANGEBYLEX"); }},
      {3, [](Gen& g) { return ByLex(g, "ZREVRANGEBYLEX"); }},
      {3, [](Gen& g) {
         Args a{"ZREVRANGE", AnyKey(g), g.Int(), g.Int()};
         AddWithScores(g, &a);
         return a;
       }},
      {3, [](Gen& g) { return Args{g.Chance(50) ? "ZRANK" : "ZREVRANK", AnyKey(g), Member(g)}; }},
      {3, [](Gen& g) {
         Args a{g.Chance(50) ? "ZPOPMIN" : "ZPOPMAX", AnyKey(g)};
         if (g.Chance(60)) a.push_back(SmallCount(g));
         return a;
       }},
      {2, Zmpop},
      {2, [](Gen& g) { return Args{"ZREMRANGEBYRANK", AnyKey(g), g.Int(), g.Int()}; }},
      {2, [](Gen& g) {
         return Args{"ZREMRANGEBYSCORE", ScoredKey(g), ScoreBound(g), ScoreBound(g)};
       }},
      {2, [](Gen& g) { return Args{"ZREMRANGEBYLEX", LexKey(g), LexBound(g), LexBound(g)}; }},
      {2, [](Gen& g) { return SetOp(g, "ZUNION"); }},
      {2, [](Gen& g) { return SetOp(g, "ZINTER"); }},
      {2, [](Gen& g) { return SetOp(g, "ZDIFF"); }},
      {2, [](Gen& g) { return SetOp(g, "ZUNIONSTORE"); }},
      {2, [](Gen& g) { return SetOp(g, "ZINTERSTORE"); }},
      {2, [](Gen& g) { return SetOp(g, "ZDIFFSTORE"); }},
      {2, [](Gen& g) { return SetOp(g, "ZINTERCARD"); }},
      {2, Zrandmember},
      {2, Zscan},
      {4, [](Gen& g) { return Args{"OBJECT", "ENCODING", AnyKey(g)}; }},
  });
  t->normalizers["ZRANDMEMBER"] = TypeOnly;
  t->normalizers["ZSCAN"] = ScanPairs;
}

}  // namespace kv::test
