// Generators for the string and generic keyspace commands.
#include <algorithm>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

void AddSetOptions(Gen& g, Args* a) {
  static const char* kOpts[] = {"NX", "XX", "GET", "KEEPTTL"};
  int n = static_cast<int>(g.Pick(3));
  for (int i = 0; i < n; i++) {
    switch (g.Pick(8)) {
      case 0: a->push_back("EX"); a->push_back(g.Chance(80) ? g.Ttl() : g.BadTtl()); break;
      case 1: a->push_back("PX"); a->push_back(g.Chance(80) ? g.Ttl() + "000" : g.BadTtl()); break;
      case 2: a->push_back("EXAT"); a->push_back(g.AbsTime(false)); break;
      case 3: a->push_back("PXAT"); a->push_back(g.AbsTime(true)); break;
      default: a->push_back(kOpts[g.Pick(std::size(kOpts))]);
    }
  }
}

std::string Keys(const Args&, const Reply& r) {
  std::vector<std::string> keys;
  for (const auto& e : r.elems) keys.push_back(e.str);
  std::sort(keys.begin(), keys.end());
  std::string s = "keys:";
  for (const auto& k : keys) s += k + ",";
  return s;
}

// Remaining TTLs depend on when each server ran the command.
std::string Ttl(const Args&, const Reply& r) {
  if (r.type == ':' && r.integer >= 0) return ":<ttl>";
  return r.raw;
}

}  // namespace

void AddStringAndKeyGens(GenTable* t) {
  t->gens.insert(t->gens.end(), {
      {10, [](Gen& g) { return Args{"GET", g.Key()}; }},
      {10, [](Gen& g) { Args a{"SET", g.Key(), g.Value()}; AddSetOptions(g, &a); return a; }},
      {2, [](Gen& g) { return Args{"SETNX", g.Key(), g.Value()}; }},
      {2, [](Gen& g) { return Args{"SETEX", g.Key(), g.Chance(80) ? g.Ttl() : g.BadTtl(), g.Value()}; }},
      {2, [](Gen& g) { return Args{"PSETEX", g.Key(), g.Chance(80) ? g.Ttl() + "000" : g.BadTtl(), g.Value()}; }},
      {3, [](Gen& g) { return Args{"MGET", g.Key(), g.Key(), g.Key()}; }},
      {3, [](Gen& g) { return Args{"MSET", g.Key(), g.Value(), g.Key(), g.Value()}; }},
      {2, [](Gen& g) { return Args{"MSETNX", g.Key(), g.Value(), g.Key(), g.Value()}; }},
      {2, [](Gen& g) { return Args{"GETSET", g.Key(), g.Value()}; }},
      {2, [](Gen& g) { return Args{"GETDEL", g.Key()}; }},
      {2, [](Gen& g) {
         Args a{"GETEX", g.Key()};
         if (g.Chance(50)) {
           bool ms = g.Chance(50);
           a.push_back(ms ? "PX" : "EX");
           a.push_back(g.Ttl() + (ms ? "000" : ""));
         }
         else if (g.Chance(50)) a.push_back("PERSIST");
         return a;
       }},
      {4, [](Gen& g) { return Args{"APPEND", g.Key(), g.Value()}; }},
      {3, [](Gen& g) { return Args{"STRLEN", g.Key()}; }},
      {3, [](Gen& g) { return Args{"GETRANGE", g.Key(), g.Int(), g.Int()}; }},
      {3, [](Gen& g) { return Args{"SETRANGE", g.Key(), std::to_string(g.Pick(30)), g.Value()}; }},
      {4, [](Gen& g) { return Args{"INCR", g.Key()}; }},
      {3, [](Gen& g) { return Args{"DECR", g.Key()}; }},
      {4, [](Gen& g) { return Args{"INCRBY", g.Key(), g.Int()}; }},
      {3, [](Gen& g) { return Args{"DECRBY", g.Key(), g.Int()}; }},
      {4, [](Gen& g) { return Args{"INCRBYFLOAT", g.Key(), g.Float()}; }},
      {2, [](Gen& g) {
         Args a{"LCS", g.Key(), g.Key()};
         if (g.Chance(30)) a.push_back("LEN");
         else if (g.Chance(40)) { a.push_back("IDX"); if (g.Chance(50)) a.push_back("WITHMATCHLEN"); }
         return a;
       }},
      {4, [](Gen& g) { return Args{"DEL", g.Key(), g.Key()}; }},
      {1, [](Gen& g) { return Args{"UNLINK", g.Key()}; }},
      {4, [](Gen& g) { return Args{"EXISTS", g.Key(), g.Key(), g.Key()}; }},
      {3, [](Gen& g) { return Args{"TYPE", g.Key()}; }},
      {2, [](Gen& g) { return Args{"RENAME", g.Key(), g.Key()}; }},
      {2, [](Gen& g) { return Args{"RENAMENX", g.Key(), g.Key()}; }},
      {2, [](Gen& g) { return Args{"KEYS", g.Chance(50) ? "*" : "k[0-3]"}; }},
      {2, [](Gen& g) { return Args{"DBSIZE"}; }},
      {1, [](Gen& g) { return Args{"MOVE", g.Key(), std::to_string(g.Pick(3))}; }},
      {2, [](Gen& g) {
         Args a{"COPY", g.Key(), g.Key()};
         if (g.Chance(30)) { a.push_back("DB"); a.push_back(std::to_string(g.Pick(3))); }
         if (g.Chance(50)) a.push_back("REPLACE");
         return a;
       }},
      {3, [](Gen& g) {
         static const char* kCmds[] = {"EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"};
         std::string cmd = kCmds[g.Pick(4)];
         bool abs = cmd.find("AT") != std::string::npos;
         std::string rel = g.Ttl() + (cmd[0] == 'P' ? "000" : "");
         Args a{cmd, g.Key(), abs ? g.AbsTime(cmd[0] == 'P') : (g.Chance(85) ? rel : g.BadTtl())};
         static const char* kOpts[] = {"NX", "XX", "GT", "LT"};
         if (g.Chance(30)) a.push_back(kOpts[g.Pick(4)]);
         return a;
       }},
      {3, [](Gen& g) { return Args{g.Chance(50) ? "TTL" : "PTTL", g.Key()}; }},
      {2, [](Gen& g) { return Args{g.Chance(50) ? "EXPIRETIME" : "PEXPIRETIME", g.Key()}; }},
      {2, [](Gen& g) { return Args{"PERSIST", g.Key()}; }},
      {1, [](Gen& g) { return Args{"TOUCH", g.Key(), g.Key()}; }},
      {2, [](Gen& g) { return Args{"OBJECT", "ENCODING", g.Key()}; }},
  });
  t->normalizers["KEYS"] = Keys;
  for (const char* c : {"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"}) t->normalizers[c] = Ttl;
}

}  // namespace kv::test
