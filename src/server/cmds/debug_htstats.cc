// DEBUG's views of the data structures: HTSTATS and HTSTATS-KEY (the hash tables' bucket and
// chain figures, in Redis' dictGetStats layout), SDSLEN, LISTPACK, QUICKLIST and STRUCTSIZE.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cmd/errors.h"
#include "server/cmds/debug_cmds.h"
#include "server/server.h"
#include "store/entry.h"
#include "store/table_stats.h"

namespace kv::server::debug {
namespace {

// Redis' _dictGetStatsHt for one bucket array; the figures are computed in float, as there.
std::string FormatTable(const store::TableStats& st, int index) {
  const char* role = index == 0 ? "main hash table" : "rehashing target";
  char buf[512];
  snprintf(buf, sizeof(buf), "Hash table %d stats (%s):\n", index, role);
  std::string out = buf;
  if (st.used == 0) return out + "No stats available for empty dictionaries\n";
  snprintf(buf, sizeof(buf),
           " table size: %zu\n number of elements: %zu\n different slots: %zu\n"
           " max chain length: %zu\n avg chain length (counted): %.02f\n"
           " avg chain length (computed): %.02f\n Chain length distribution:\n",
           st.size, st.used, st.slots, st.max_chain,
           static_cast<float>(st.total_chain) / static_cast<float>(st.slots),
           static_cast<float>(st.used) / static_cast<float>(st.slots));
  out += buf;
  // The last slot counts the chains too long to track one by one; Redis does not print it.
  for (size_t i = 0; i + 1 < st.chains.size(); i++) {
    if (st.chains[i] == 0) continue;
    snprintf(buf, sizeof(buf), "   %zu: %zu (%.02f%%)\n", i, st.chains[i],
             static_cast<float>(st.chains[i]) / static_cast<float>(st.size) * 100);
    out += buf;
  }
  return out;
}

// Redis' dictGetStats: the main array, then the rehash target while rehashing.
std::string FormatStats(const std::vector<store::TableStats>& tables) {
  std::string out;
  for (size_t i = 0; i < tables.size(); i++) out += FormatTable(tables[i], static_cast<int>(i));
  return out;
}

// A database's TTLs are a dense array with one key a slot (store/db.h), not a hash table: as a
// table it has as many slots as keys, each holding a chain of one.
store::TableStats ExpiresStats(const store::Db& db) {
  store::TableStats st;
  st.size = st.used = st.slots = st.total_chain = db.expires_size();
  st.max_chain = st.used > 0 ? 1 : 0;
  st.chains.assign(store::TableStats::kChainsTracked, 0);
  st.chains[1] = st.used;
  return st;
}

}  // namespace

void HtStats(cmd::Context& c) {
  int64_t dbid = 0;
  if (!c.ParseInt(c.arg(2), &dbid)) return;
  if (dbid < 0 || dbid >= c.ks.num_dbs()) {
    c.Error("Out of range database");
    return;
  }
  store::Db& db = c.ks.db(static_cast<int>(dbid));
  std::string out = "[Dictionary HT]\n" + FormatStats(db.table().Stats());
  out += "[Expires HT]\n" + FormatTable(ExpiresStats(db), 0);
  c.out.Verbatim(out, "txt");
}

void HtStatsKey(cmd::Context& c) {
  store::Entry* e = c.LookupWrite(c.arg(2));
  if (!e) {
    c.Error(cmd::OpStatus::kNoSuchKey);
    return;
  }
  std::vector<store::TableStats> tables;
  if (store::Collection* obj = e->value.object()) tables = obj->HashTableStats();
  if (tables.empty()) {
    c.Error("The value stored at the specified key is not represented using an hash table");
    return;
  }
  c.out.Verbatim(FormatStats(tables), "txt");
}

// Redis reports its sds headers; kvstore's strings have none: a key is stored inline after its
// entry (no spare room), a value in a buffer whose spare room APPEND and SETRANGE grow into.
void SdsLen(cmd::Context& c) {
  store::Entry* e = c.db().Find(c.arg(2));
  if (!e) {
    c.Error(cmd::OpStatus::kNoSuchKey);
    return;
  }
  const store::Value& v = e->value;
  if (!v.is_string() || v.is_int()) {
    c.Error("Not an sds encoded string.");
    return;
  }
  char buf[256];
  snprintf(buf, sizeof(buf),
           "key_sds_len:%lld, key_sds_avail:%lld, key_zmalloc: %lld, val_sds_len:%lld, "
           "val_sds_avail:%lld, val_zmalloc: %lld",
           static_cast<long long>(e->key_len), 0LL, static_cast<long long>(e->key_len),
           static_cast<long long>(v.StrLen()), static_cast<long long>(v.StrCapacity() - v.StrLen()),
           static_cast<long long>(v.StrCapacity()));
  c.out.Simple(buf);
}

namespace {

// Prints a collection's elements to standard output, one a line, as LISTPACK and QUICKLIST
// print the structure's entries there.
void PrintElements(const char* what, const store::Collection& obj) {
  std::cout << "{" << what << "} {count " << obj.Size() << "}\n";
  size_t i = 0;
  obj.ForEach([&](std::string_view first, std::string_view second) {
    std::cout << "{index " << i++ << "} " << first;
    if (!second.empty()) std::cout << " " << second;
    std::cout << "\n";
  });
  std::cout.flush();
}

// The collection at the key, for LISTPACK and QUICKLIST; nullptr (the error answered) when
// the key is missing or not in `encoding`.
const store::Collection* EncodedAs(cmd::Context& c, std::string_view encoding,
                                   std::string_view error) {
  store::Entry* e = c.LookupWrite(c.arg(2));
  if (!e) {
    c.Error(cmd::OpStatus::kNoSuchKey);
    return nullptr;
  }
  if (e->value.EncodingName() != encoding) {
    c.Error(error);
    return nullptr;
  }
  return e->value.object();
}

}  // namespace

void Listpack(cmd::Context& c) {
  const store::Collection* obj = EncodedAs(c, "listpack", "Not a listpack encoded object.");
  if (!obj) return;
  PrintElements("listpack", *obj);
  c.out.Simple("Listpack structure printed on stdout");
}

// The level of detail (Redis' atoi of the third argument) picks whether the elements are
// printed, after the count.
void Quicklist(cmd::Context& c) {
  const store::Collection* obj = EncodedAs(c, "quicklist", "Not a quicklist encoded object.");
  if (!obj) return;
  bool full = c.argc() == 4 && atoi(std::string(c.arg(3)).c_str()) != 0;
  if (full) {
    PrintElements("quicklist", *obj);
  } else {
    std::cout << "{quicklist} {count " << obj->Size() << "}" << std::endl;
  }
  c.out.Simple("Quicklist structure printed on stdout");
}

// Redis lists the sizes of its object header, dict entry and sds headers; kvstore's value
// (its object header) and key entry (its dict entry) are the counterparts, and its strings carry
// no sds header.
void StructSize(cmd::Context& c) {
  char buf[128];
  snprintf(buf, sizeof(buf), "bits:%d robj:%d dictentry:%d ", sizeof(void*) == 8 ? 64 : 32,
           static_cast<int>(sizeof(store::Value)), static_cast<int>(sizeof(store::Entry)));
  c.out.Bulk(buf);
}

}  // namespace kv::server::debug
