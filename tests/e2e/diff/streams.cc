// Generators for the stream commands so far (XADD XLEN XRANGE XREVRANGE XDEL XTRIM XSETID and
// XREAD without BLOCK): explicit IDs (auto IDs would differ between the servers) growing mostly
// forward, "<ms>-*", odd and invalid IDs, MAXLEN/MINID with = ~ LIMIT, NOMKSTREAM, ranges with
// exclusive bounds, node limits changed on the fly (so nodes split at Redis' points), and DUMP
// of the streams, whose bytes must be Redis' exactly.
#include <string>

#include "tests/e2e/diff/gen.h"

namespace kv::test {
namespace {

std::string StreamKey(Gen& g) { return g.Chance(85) ? "st" + std::to_string(g.Pick(3)) : g.Key(); }

// IDs near a moving front, so most XADDs succeed and ranges hit entries.
std::string Id(Gen& g) {
  static const char* kOdd[] = {"0-0",
                               "0-1",
                               "-",
                               "+",
                               "abc",
                               "1-x",
                               "18446744073709551615-18446744073709551615",
                               "5",
                               " 7",
                               "+9",
                               "3-",
                               "-1",
                               "99999999999999999999"};
  if (g.Chance(8)) return kOdd[g.Pick(std::size(kOdd))];
  std::string ms = std::to_string(g.Pick(200));
  if (g.Chance(25)) return ms;
  return ms + "-" + std::to_string(g.Pick(4));
}

std::string AddId(Gen& g) {
  static int front = 0;  // both servers see the same sequence; only the values matter
  if (g.Chance(10)) return Id(g);
  front += 1 + static_cast<int>(g.Pick(3));
  if (g.Chance(20)) return std::to_string(front) + "-*";
  return std::to_string(front) + "-" + std::to_string(g.Pick(3));
}

std::string RangeBound(Gen& g) {
  std::string id = Id(g);
  if (g.Chance(20)) return "(" + id;
  return g.Chance(20) ? (g.Chance(50) ? "-" : "+") : id;
}

void Fields(Gen& g, Args* a) {
  static const char* kFields[] = {"f", "g", "name", "1", "-5", "temp"};
  size_t n = 1 + g.Pick(3);
  bool same = g.Chance(60);  // the master entry's fields, so SAMEFIELDS entries appear
  for (size_t i = 0; i < n; i++) {
    a->push_back(same ? std::string(kFields[i]) : kFields[g.Pick(std::size(kFields))]);
    a->push_back(g.Chance(70) ? std::to_string(g.Pick(100000)) : g.Value());
  }
}

void Trim(Gen& g, Args* a) {
  bool maxlen = g.Chance(60);
  a->push_back(maxlen ? "MAXLEN" : "MINID");
  if (g.Chance(60)) a->push_back(g.Chance(50) ? "~" : "=");
  a->push_back(maxlen ? (g.Chance(90) ? std::to_string(g.Pick(30)) : g.Int()) : Id(g));
  if (g.Chance(15)) {
    a->push_back("LIMIT");
    a->push_back(g.Chance(80) ? std::to_string(g.Pick(20)) : g.Int());
  }
}

Args XAdd(Gen& g) {
  Args a{"XADD", StreamKey(g)};
  if (g.Chance(5)) a.push_back("NOMKSTREAM");
  if (g.Chance(15)) Trim(g, &a);
  a.push_back(AddId(g));
  Fields(g, &a);
  if (g.Chance(3)) a.pop_back();  // a field without its value
  return a;
}

Args XRange(Gen& g) {
  bool rev = g.Chance(40);
  Args a{rev ? "XREVRANGE" : "XRANGE", StreamKey(g), RangeBound(g), RangeBound(g)};
  if (!rev && g.Chance(60)) a = {"XRANGE", a[1], g.Chance(50) ? "-" : a[2], "+"};
  if (rev && g.Chance(60)) a = {"XREVRANGE", a[1], "+", g.Chance(50) ? "-" : a[3]};
  if (g.Chance(40)) {
    a.push_back("COUNT");
    a.push_back(g.Chance(85) ? std::to_string(g.Pick(8)) : g.Int());
  }
  return a;
}

Args XRead(Gen& g) {
  Args a{"XREAD"};
  if (g.Chance(40)) {
    a.push_back("COUNT");
    a.push_back(g.Chance(85) ? std::to_string(g.Pick(5)) : g.Int());
  }
  if (g.Chance(3)) a.push_back(g.Chance(50) ? "NOACK" : "GROUP");
  a.push_back("STREAMS");
  size_t n = 1 + g.Pick(3);
  for (size_t i = 0; i < n; i++) a.push_back(StreamKey(g));
  for (size_t i = 0; i < n; i++) a.push_back(g.Chance(15) ? "$" : (g.Chance(3) ? ">" : Id(g)));
  if (g.Chance(4)) a.pop_back();  // unbalanced
  return a;
}

// Consumer groups live on their own keys: their DUMP payloads hold delivery times, so the
// streams whose bytes are compared (st*) never get groups.
std::string GroupKey(Gen& g) { return g.Chance(90) ? "gs" + std::to_string(g.Pick(2)) : g.Key(); }
std::string Group(Gen& g) { return g.Chance(90) ? "g" + std::to_string(g.Pick(2)) : "nog"; }
std::string Consumer(Gen& g) { return "c" + std::to_string(g.Pick(3)); }

Args XGroup(Gen& g) {
  switch (g.Pick(6)) {
    case 0:
    case 1: {
      Args a{"XGROUP", "CREATE", GroupKey(g), Group(g), g.Chance(30) ? "$" : Id(g)};
      if (g.Chance(60)) a.push_back("MKSTREAM");
      if (g.Chance(20)) {
        a.push_back("ENTRIESREAD");
        a.push_back(g.Chance(80) ? std::to_string(g.Pick(10)) : g.Int());
      }
      return a;
    }
    case 2: {
      Args a{"XGROUP", "SETID", GroupKey(g), Group(g), g.Chance(30) ? "$" : Id(g)};
      if (g.Chance(30)) {
        a.push_back("ENTRIESREAD");
        a.push_back(std::to_string(g.Pick(10)));
      }
      return a;
    }
    case 3:
      return Args{"XGROUP", g.Chance(80) ? "CREATECONSUMER" : "DELCONSUMER", GroupKey(g), Group(g),
                  Consumer(g)};
    case 4:
      return Args{"XGROUP", g.Chance(90) ? "DESTROY" : "HELP", GroupKey(g), Group(g)};
    default:
      return Args{"XGROUP", g.Chance(50) ? "DELCONSUMER" : "BOGUS", GroupKey(g), Group(g),
                  Consumer(g)};
  }
}

Args XReadGroup(Gen& g) {
  Args a{"XREADGROUP", "GROUP", Group(g), Consumer(g)};
  if (g.Chance(50)) {
    a.push_back("COUNT");
    a.push_back(std::to_string(g.Pick(4)));
  }
  if (g.Chance(20)) a.push_back("NOACK");
  a.push_back("STREAMS");
  size_t n = 1 + g.Pick(2);
  for (size_t i = 0; i < n; i++) a.push_back(GroupKey(g));
  for (size_t i = 0; i < n; i++) a.push_back(g.Chance(70) ? ">" : (g.Chance(10) ? "$" : Id(g)));
  return a;
}

Args XClaim(Gen& g) {
  Args a{"XCLAIM", GroupKey(g), Group(g), Consumer(g), g.Chance(90) ? "0" : "99999999"};
  for (size_t i = 1 + g.Pick(3); i > 0; i--) a.push_back(Id(g));
  static const char* kOpts[] = {"JUSTID", "FORCE", "RETRYCOUNT", "LASTID", "BOGUS"};
  for (size_t i = g.Pick(3); i > 0; i--) {
    std::string o = kOpts[g.Pick(std::size(kOpts))];
    a.push_back(o);
    if (o == "RETRYCOUNT") a.push_back(std::to_string(g.Pick(5)));
    if (o == "LASTID") a.push_back(Id(g));
  }
  if (!g.Chance(30)) a.push_back("JUSTID");  // entries otherwise: the same, but longer
  return a;
}

// XPENDING's extended form carries idle times, which differ between the two runs.
std::string PendingNormal(const Args&, const Reply& r) {
  if (r.type != '*') return r.raw;
  std::string s = "*" + std::to_string(r.elems.size());
  for (const Reply& e : r.elems) {
    if (e.type == '*' && e.elems.size() == 4 && e.elems[2].type == ':') {
      s += "[" + e.elems[0].raw + e.elems[1].raw + "idle" + e.elems[3].raw + "]";
    } else {
      s += e.raw;
    }
  }
  return s;
}

// XINFO CONSUMERS carries idle times; the rest is compared as is.
std::string InfoNormal(const Args& cmd, const Reply& r) {
  if (cmd.size() < 2 || !(cmd[1] == "CONSUMERS") || r.type != '*') return r.raw;
  std::string s = "*" + std::to_string(r.elems.size());
  for (const Reply& e : r.elems) {
    for (size_t i = 0; i + 1 < e.elems.size(); i += 2) {
      s += e.elems[i].raw + (e.elems[i].str == "idle" ? "idle" : e.elems[i + 1].raw);
    }
  }
  return s;
}

}  // namespace

void AddStreamGens(GenTable* t) {
  t->gens.insert(
      t->gens.end(),
      {
          {8,
           [](Gen& g) {
             Args a{"XADD", GroupKey(g), AddId(g)};
             Fields(g, &a);
             return a;
           }},
          {5, XGroup},
          {8, XReadGroup},
          {3,
           [](Gen& g) {
             Args a{"XACK", GroupKey(g), Group(g)};
             for (size_t i = 1 + g.Pick(3); i > 0; i--) a.push_back(Id(g));
             return a;
           }},
          {3,
           [](Gen& g) {
             if (g.Chance(40)) return Args{"XPENDING", GroupKey(g), Group(g)};
             Args a{"XPENDING", GroupKey(g), Group(g)};
             if (g.Chance(20)) a.insert(a.end(), {"IDLE", "99999999"});
             a.insert(a.end(), {RangeBound(g), RangeBound(g), std::to_string(g.Pick(6))});
             if (g.Chance(40)) a.push_back(Consumer(g));
             return a;
           }},
          {3, XClaim},
          {3,
           [](Gen& g) {
             Args a{"XAUTOCLAIM", GroupKey(g), Group(g), Consumer(g), "0", RangeBound(g)};
             if (g.Chance(50)) a.insert(a.end(), {"COUNT", std::to_string(g.Pick(4))});
             if (!g.Chance(20)) a.push_back("JUSTID");
             return a;
           }},
          {1,
           [](Gen& g) {
             return Args{"XRANGE", GroupKey(g), "-", "+"};
           }},
          {1,
           [](Gen& g) {
             return Args{"XDEL", GroupKey(g), Id(g)};
           }},
          {2,
           [](Gen& g) {
             return Args{"XINFO", "GROUPS", GroupKey(g)};
           }},
          {1,
           [](Gen& g) {
             return Args{"XINFO", "CONSUMERS", GroupKey(g), Group(g)};
           }},
          // Streams without groups: every field is deterministic, FULL included.
          {2,
           [](Gen& g) {
             Args a{"XINFO", "STREAM", StreamKey(g)};
             if (g.Chance(40)) a.push_back("FULL");
             if (g.Chance(20)) a.insert(a.end(), {"COUNT", std::to_string(g.Pick(4))});
             return a;
           }},
      });
  t->normalizers["XPENDING"] = PendingNormal;
  t->normalizers["XINFO"] = InfoNormal;
  t->gens.insert(t->gens.end(),
                 {
                     {14, XAdd},
                     {6, XRange},
                     {2,
                      [](Gen& g) {
                        return Args{"XLEN", StreamKey(g)};
                      }},
                     {3,
                      [](Gen& g) {
                        Args a{"XDEL", StreamKey(g)};
                        for (size_t i = 1 + g.Pick(3); i > 0; i--) a.push_back(Id(g));
                        return a;
                      }},
                     {3,
                      [](Gen& g) {
                        Args a{"XTRIM", StreamKey(g)};
                        if (g.Chance(90)) Trim(g, &a);
                        return a;
                      }},
                     {2,
                      [](Gen& g) {
                        Args a{"XSETID", StreamKey(g),
                               g.Chance(70) ? std::to_string(300 + g.Pick(100)) : Id(g)};
                        if (g.Chance(40)) {
                          a.push_back("ENTRIESADDED");
                          a.push_back(g.Chance(80) ? std::to_string(g.Pick(500)) : g.Int());
                        }
                        if (g.Chance(30)) {
                          a.push_back("MAXDELETEDID");
                          a.push_back(Id(g));
                        }
                        return a;
                      }},
                     {3, XRead},
                     // Only streams: other types' payloads differ in encodings (not in content).
                     {2,
                      [](Gen& g) {
                        return Args{"DUMP", "st" + std::to_string(g.Pick(3))};
                      }},
                     {1,
                      [](Gen& g) {
                        static const char* kEntries[] = {"2", "3", "5", "100", "0"};
                        static const char* kBytes[] = {"0", "60", "200", "4096"};
                        return g.Chance(50) ? Args{"CONFIG", "SET", "stream-node-max-entries",
                                                   kEntries[g.Pick(std::size(kEntries))]}
                                            : Args{"CONFIG", "SET", "stream-node-max-bytes",
                                                   kBytes[g.Pick(std::size(kBytes))]};
                      }},
                 });
}

}  // namespace kv::test
