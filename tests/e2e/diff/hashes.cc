// Generators for the hash commands. Fields come from Gen::Member() (a small vocabulary, so
// fields repeat), values from Gen::Value() (which is sometimes longer than 64 bytes, converting
// the hash to the hashtable encoding); a bulk HSET around the 512-field limit converts by count.
// OBJECT ENCODING and DEBUG DIGEST-VALUE check the encoding and the contents step by step.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

// Field and value pairs: mostly the small vocabulary, now and then a field too long for the
// listpack.
void AddPairs(Gen& g, Args* a, size_t n) {
  for (size_t i = 0; i < n; i++) {
    a->push_back(g.Chance(3) ? std::string(65 + g.Pick(10), 'f') : g.Member());
    a->push_back(g.Value());
  }
}

Args Fields(Gen& g, Args a, size_t n) {
  for (size_t i = 0; i < n; i++) a.push_back(g.Member());
  return a;
}

// HSET of 508..516 fields "b0".."bN" (plus the hash's other fields): crosses the 512 limit
// sometimes in one command and sometimes in a later one.
Args BulkHSet(Gen& g) {
  Args a{"HSET", g.Key()};
  size_t n = 508 + g.Pick(9);
  for (size_t i = 0; i < n; i++) {
    a.push_back("b" + std::to_string(i));
    a.push_back(std::to_string(g.Pick(1000)));
  }
  return a;
}

Args HScan(Gen& g) {
  Args a{"HSCAN", g.Key()};
  if (g.Chance(75)) {
    // Complete in one call whatever the encoding (see ScanNormal).
    a.push_back("0");
    if (g.Chance(50)) {
      static const char* kPatterns[] = {"*", "m1*", "b1?", "m[0-3]", "nomatch"};
      a.push_back("MATCH");
      a.push_back(kPatterns[g.Pick(std::size(kPatterns))]);
    }
    a.push_back("COUNT");
    a.push_back("1000");
  } else {
    static const char* kCursors[] = {"0", "7", "-1", "abc", "18446744073709551616"};
    a.push_back(kCursors[g.Pick(std::size(kCursors))]);
    if (g.Chance(50)) {
      static const char* kCounts[] = {"1", "5", "0", "-1", "x"};
      a.push_back("COUNT");
      a.push_back(kCounts[g.Pick(std::size(kCounts))]);
    }
  }
  return a;
}

Args HRandField(Gen& g) {
  Args a{"HRANDFIELD", g.Key()};
  if (g.Chance(25)) return a;
  static const char* kCounts[] = {"-5", "-1", "0", "1", "2", "3", "5", "20", "600", "x",
                                  "-9223372036854775808", "4611686018427387904"};
  a.push_back(kCounts[g.Pick(std::size(kCounts))]);
  if (g.Chance(50)) a.push_back(g.Chance(90) ? "WITHVALUES" : "withvalue");
  return a;
}

bool IsCommandError(const Reply& r) { return r.type == '-'; }

// HSCAN: a call from cursor 0 with COUNT 1000 returns every (matching) field in both encodings,
// compared as a set of pairs; any other call depends on the table's hash seed, so only its
// shape is compared.
std::string ScanNormal(const Args& cmd, const Reply& r) {
  if (IsCommandError(r) || r.elems.size() != 2) return r.raw;
  bool complete_call = cmd.size() >= 5 && cmd[2] == "0" && cmd[cmd.size() - 1] == "1000";
  if (!complete_call) return "scan-reply";
  return "cursor:" + r.elems[0].str + " " + SortedPairs(cmd, r.elems[1]);
}

// HRANDFIELD: the shape (counts, nesting) always; the members when the reply must be the whole
// hash (a positive count larger than what came back).
std::string RandNormal(const Args& cmd, const Reply& r) {
  if (IsCommandError(r) || r.is_null) return r.raw;
  if (cmd.size() < 3) return std::string(1, r.type) + "field";
  bool withvalues = cmd.size() == 4;
  bool nested = withvalues && !r.elems.empty() && r.elems[0].type == '*';
  int64_t count = strtoll(cmd[2].c_str(), nullptr, 10);
  size_t per = withvalues && !nested ? 2 : 1;
  if (count > 0 && r.elems.size() / per < static_cast<size_t>(count)) {
    return "whole:" + (per == 2 ? SortedPairs(cmd, r) : SortedElements(cmd, r));
  }
  std::string s = std::string(1, r.type) + std::to_string(r.elems.size());
  for (const Reply& e : r.elems) {
    if (e.type != '$') s += std::string(1, e.type) + std::to_string(e.elems.size());
  }
  return s;
}

}  // namespace

void AddHashGens(GenTable* t) {
  t->gens.insert(t->gens.end(), {
      {10, [](Gen& g) { Args a{"HSET", g.Key()}; AddPairs(g, &a, 1 + g.Pick(4)); return a; }},
      {2, [](Gen& g) { Args a{"HMSET", g.Key()}; AddPairs(g, &a, 1 + g.Pick(3)); return a; }},
      {3, [](Gen& g) { return Args{"HSETNX", g.Key(), g.Member(), g.Value()}; }},
      {1, BulkHSet},
      {6, [](Gen& g) { return Args{"HGET", g.Key(), g.Member()}; }},
      {3, [](Gen& g) { return Fields(g, {"HMGET", g.Key()}, 1 + g.Pick(4)); }},
      {5, [](Gen& g) { return Fields(g, {"HDEL", g.Key()}, 1 + g.Pick(3)); }},
      {3, [](Gen& g) { return Args{"HLEN", g.Key()}; }},
      {3, [](Gen& g) { return Args{"HEXISTS", g.Key(), g.Member()}; }},
      {2, [](Gen& g) { return Args{"HSTRLEN", g.Key(), g.Member()}; }},
      {4, [](Gen& g) { return Args{"HGETALL", g.Key()}; }},
      {2, [](Gen& g) { return Args{"HKEYS", g.Key()}; }},
      {2, [](Gen& g) { return Args{"HVALS", g.Key()}; }},
      {4, [](Gen& g) { return Args{"HINCRBY", g.Key(), g.Member(), g.Int()}; }},
      {4, [](Gen& g) { return Args{"HINCRBYFLOAT", g.Key(), g.Member(), g.Float()}; }},
      {3, HScan},
      {3, HRandField},
      {3, [](Gen& g) { return Args{"OBJECT", "ENCODING", g.Key()}; }},
      {2, [](Gen& g) { return Args{"DEBUG", "DIGEST-VALUE", g.Key()}; }},
  });
  t->normalizers["HGETALL"] = SortedPairs;
  t->normalizers["HKEYS"] = SortedElements;
  t->normalizers["HVALS"] = SortedElements;
  t->normalizers["HSCAN"] = ScanNormal;
  t->normalizers["HRANDFIELD"] = RandNormal;
}

}  // namespace kv::test
