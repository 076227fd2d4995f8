// Generators for the set commands. Members mix integers and strings so that both encodings
// (intset, hashtable) and the conversions between them are reached; a rare big SADD and a
// CONFIG SET of set-max-intset-entries cross the entry limit. Redis' random choices are kept
// out of the datasets: SPOP only meets keys holding at most one member (see PopKey), since the
// test may drop any command's last argument and a count-less SPOP of a bigger set picks at
// random. (sets_test.cc covers the other pops.) Replies whose order or
// choice Redis leaves open are normalised (SortedElements, TypeOnly, a stable SSCAN form).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

// Integers (canonical and extreme) and strings from the shared small vocabularies, plus now and
// then any value (empty, binary, long, integer-looking but not canonical).
std::string SetMember(Gen& g, bool ints_only) {
  static const char* kInts[] = {"0",  "1",  "2",  "3",  "4",      "5",     "7",
                                "12", "-3", "-1", "99", "100000", "-70000",
                                "9223372036854775807", "-9223372036854775808"};
  if (ints_only || g.Chance(45)) return kInts[g.Pick(std::size(kInts))];
  if (g.Chance(85)) return g.Member();
  return g.Value();
}

// Half the time a shared key (k0..k7, which other families fill with other types: WRONGTYPE
// paths), else one of the keys s0..s3 that only set commands write, so sets grow and meet.
std::string SKey(Gen& g) { return g.Chance(50) ? g.Key() : "s" + std::to_string(g.Pick(4)); }

void AddMembers(Gen& g, Args* a, size_t min, size_t max) {
  bool ints_only = g.Chance(50);
  size_t n = min + g.Pick(max - min + 1);
  for (size_t i = 0; i < n; i++) a->push_back(SetMember(g, ints_only));
}

void AddKeys(Gen& g, Args* a, size_t max) {
  size_t n = 1 + g.Pick(max);
  for (size_t i = 0; i < n; i++) a->push_back(SKey(g));
}

// Keys SPOP may pop from without a random choice, even when the differential test drops the
// count: "one" and "onei" hold at most one member (only SMOVE, whose arity is exact, writes
// them: no extra argument can add a second member), "str1" is a string (WRONGTYPE) and "nope"
// never exists.
std::string PopKey(Gen& g) {
  static const char* kKeys[] = {"one", "one", "onei", "onei", "str1", "nope"};
  return kKeys[g.Pick(std::size(kKeys))];
}

// Counts for SPOP: whole-set pops, zero, and invalid values.
std::string PopCount(Gen& g) {
  static const char* kCounts[] = {"1", "2", "100000", "0", "-1", "abc", "",
                                  "9223372036854775807", "-9223372036854775808"};
  return kCounts[g.Pick(std::size(kCounts))];
}

std::string RandCount(Gen& g) {
  static const char* kCounts[] = {"100000", "100000", "1", "2", "5", "0", "-1", "-5", "-30",
                                  "abc", "-9223372036854775808", "9223372036854775807"};
  return kCounts[g.Pick(std::size(kCounts))];
}

std::string Pattern(Gen& g) {
  static const char* kPatterns[] = {"*", "m*", "1*", "m1?", "*[0-5]", "-*", "nomatch"};
  return kPatterns[g.Pick(std::size(kPatterns))];
}

Args SScan(Gen& g) {
  static const char* kCursors[] = {"0", "0", "0", "0", "0", "0", "7", "abc", "-1",
                                   "18446744073709551616"};
  Args a{"SSCAN", SKey(g), kCursors[g.Pick(std::size(kCursors))]};
  if (g.Chance(40)) {
    a.push_back("MATCH");
    a.push_back(Pattern(g));
  }
  if (g.Chance(85)) {
    static const char* kCounts[] = {"1000", "1000", "1000", "1000", "2", "0", "-1", "x"};
    a.push_back("COUNT");
    a.push_back(kCounts[g.Pick(std::size(kCounts))]);
  }
  if (g.Chance(3)) a.push_back(g.Chance(50) ? "TYPE" : "MATCH");
  return a;
}

Args SInterCard(Gen& g) {
  size_t keys = 1 + g.Pick(3);
  std::string numkeys = std::to_string(keys);
  if (g.Chance(10)) {
    static const char* kBad[] = {"0", "-1", "abc", "5"};
    numkeys = kBad[g.Pick(std::size(kBad))];
  }
  Args a{"SINTERCARD", numkeys};
  for (size_t i = 0; i < keys; i++) a.push_back(SKey(g));
  if (g.Chance(40)) {
    static const char* kLimits[] = {"0", "1", "2", "100", "-1", "x"};
    a.push_back(g.Chance(90) ? "LIMIT" : "LIMITS");
    a.push_back(kLimits[g.Pick(std::size(kLimits))]);
  }
  return a;
}

// SADD of 510 or 520 consecutive integers: just under or over the default intset limit.
Args BigSAdd(Gen& g) {
  Args a{"SADD", SKey(g)};
  int n = g.Chance(50) ? 510 : 520;
  for (int i = 0; i < n; i++) a.push_back(std::to_string(i));
  return a;
}

// ---- Normalisers ------------------------------------------------------------------------------
// They render replies from the parsed fields rather than Reply::raw, which RespClient sets only
// for a whole reply: the elements of an EXEC reply, normalised one by one, carry no raw bytes.

std::string Render(const Reply& r) {
  std::string s(1, r.type);
  if (r.is_null) return s + "null";
  switch (r.type) {
    case ':': return s + std::to_string(r.integer);
    case '*': case '~': case '%': case '>': {
      s += std::to_string(r.elems.size()) + "[";
      for (const Reply& e : r.elems) s += Render(e) + ",";
      return s + "]";
    }
    default: return s + std::to_string(r.str.size()) + ":" + r.str;
  }
}

std::string Exact(const Args&, const Reply& r) { return Render(r); }

// Aggregates compared as sorted elements: hashtable member order differs between servers.
std::string SortedMembers(const Args&, const Reply& r) {
  if (r.type != '*' && r.type != '~') return Render(r);
  std::vector<std::string> v;
  for (const Reply& e : r.elems) v.push_back(Render(e));
  std::sort(v.begin(), v.end());
  std::string s = std::string(1, r.type) + std::to_string(v.size()) + "sorted[";
  for (const auto& e : v) s += e + ",";
  return s + "]";
}

bool IsDecimalAtLeast(const std::string& s, long long min) {
  return !s.empty() && s.size() < 19 && std::all_of(s.begin(), s.end(), ::isdigit) &&
         std::stoll(s) >= min;
}

// SRANDMEMBER: the whole set (count at least 100000) is compared as sorted members; any other
// answer is random, so only its shape (and any error text) is compared.
std::string RandMember(const Args& cmd, const Reply& r) {
  if (r.type == '-') return Render(r);
  if (cmd.size() == 3 && r.type == '*' && IsDecimalAtLeast(cmd[2], 100000)) {
    return SortedMembers(cmd, r);
  }
  return std::string(1, r.type) + (r.is_null ? "null" : "") + std::to_string(r.elems.size());
}

// SSCAN from cursor 0 with COUNT 1000 returns every member of these sets with cursor 0, in
// both servers; other cursors and counts depend on each server's hash table layout.
std::string SScanForm(const Args& cmd, const Reply& r) {
  if (r.type != '*' || r.elems.size() != 2) return Render(r);
  bool whole = cmd.size() >= 3 && cmd[2] == "0";
  bool big_count = false;
  for (size_t i = 3; i + 1 < cmd.size(); i++) {
    std::string opt = cmd[i];
    std::transform(opt.begin(), opt.end(), opt.begin(), ::toupper);
    if (opt == "COUNT") big_count = cmd[i + 1] == "1000";
  }
  if (whole && big_count) return "sscan:" + r.elems[0].str + SortedMembers(cmd, r.elems[1]);
  return "sscan:partial";
}

}  // namespace

void AddSetGens(GenTable* t) {
  t->gens.insert(t->gens.end(), {
      {14, [](Gen& g) { Args a{"SADD", SKey(g)}; AddMembers(g, &a, 1, 4); return a; }},
      {6, [](Gen& g) { Args a{"SREM", SKey(g)}; AddMembers(g, &a, 1, 3); return a; }},
      {4, [](Gen& g) { return Args{"SISMEMBER", SKey(g), SetMember(g, false)}; }},
      {3, [](Gen& g) { Args a{"SMISMEMBER", SKey(g)}; AddMembers(g, &a, 1, 3); return a; }},
      {5, [](Gen& g) { return Args{"SMEMBERS", SKey(g)}; }},
      {4, [](Gen& g) { return Args{"SCARD", SKey(g)}; }},
      {2, [](Gen& g) { return Args{"SADD", "onesrc", "x", "7"}; }},
      {3, [](Gen& g) {
         bool ints = g.Chance(50);
         return Args{"SMOVE", "onesrc", ints ? "onei" : "one", ints ? "7" : "x"};
       }},
      {1, [](Gen& g) { return Args{"SET", "str1", g.Value()}; }},
      {5, [](Gen& g) {
         Args a{"SPOP", PopKey(g)};
         if (g.Chance(60)) a.push_back(PopCount(g));
         return a;
       }},
      {1, [](Gen& g) { return Args{"OBJECT", "ENCODING", g.Chance(50) ? "one" : "onei"}; }},
      {4, [](Gen& g) {
         Args a{"SRANDMEMBER", SKey(g)};
         if (g.Chance(80)) a.push_back(RandCount(g));
         return a;
       }},
      {4, [](Gen& g) { return Args{"SMOVE", SKey(g), SKey(g), SetMember(g, false)}; }},
      {3, [](Gen& g) { Args a{"SINTER"}; AddKeys(g, &a, 3); return a; }},
      {3, [](Gen& g) { return SInterCard(g); }},
      {3, [](Gen& g) { Args a{"SUNION"}; AddKeys(g, &a, 3); return a; }},
      {3, [](Gen& g) { Args a{"SDIFF"}; AddKeys(g, &a, 4); return a; }},
      {3, [](Gen& g) { Args a{"SINTERSTORE", SKey(g)}; AddKeys(g, &a, 3); return a; }},
      {3, [](Gen& g) { Args a{"SUNIONSTORE", SKey(g)}; AddKeys(g, &a, 3); return a; }},
      {3, [](Gen& g) { Args a{"SDIFFSTORE", SKey(g)}; AddKeys(g, &a, 4); return a; }},
      {4, [](Gen& g) { return SScan(g); }},
      {4, [](Gen& g) { return Args{"OBJECT", "ENCODING", SKey(g)}; }},
      {1, [](Gen& g) { return BigSAdd(g); }},
      {1, [](Gen& g) {
         static const char* kLimits[] = {"3", "8", "512"};
         return Args{"CONFIG", "SET", "set-max-intset-entries", kLimits[g.Pick(3)]};
       }},
  });
  for (const char* c : {"SADD", "SREM", "SISMEMBER", "SMISMEMBER", "SCARD", "SMOVE",
                        "SINTERCARD", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}) {
    t->normalizers[c] = Exact;
  }
  for (const char* c : {"SMEMBERS", "SINTER", "SUNION", "SDIFF", "SPOP"}) {
    t->normalizers[c] = SortedMembers;
  }
  t->normalizers["SRANDMEMBER"] = RandMember;
  t->normalizers["SSCAN"] = SScanForm;
}

}  // namespace kv::test
