// Helpers shared by the RDB tests: a dataset touching every type and encoding, and saving a
// keyspace to RDB bytes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "persist/rdb_writer.h"
#include "persist/sink.h"
#include "persist/snapshot.h"
#include "store/hash_type.h"
#include "store/list_type.h"
#include "store/set_type.h"
#include "store/zset_type.h"

namespace kv::persist::rdb_test_util {

using store::Keyspace;
using store::ObjType;
using store::Value;

inline constexpr int64_t kFarFuture = 4102444800000;  // 2100-01-01

// A dataset touching every type in its compact and its general encoding, integers, binary
// values, expiries and several databases.
inline void Fill(Keyspace& ks, std::mt19937_64& rng) {
  auto& lim = ks.limits();
  ks.Set(0, "str", Value::String("hello"));
  ks.Set(0, "int", Value::String("-123456"));
  ks.Set(0, "bigint", Value::String("9223372036854775807"));
  std::string bin(300, '\0');
  for (auto& c : bin) c = static_cast<char>(rng());
  ks.Set(0, "binary", Value::String(bin));
  ks.Set(0, "compressible", Value::String(std::string(5000, 'a') + "tail"));
  store::Entry* e = ks.Set(0, "volatile", Value::String("soon"));
  ks.db(0).SetExpire(e, kFarFuture);

  for (int size : {3, 2000}) {
    auto list = std::make_unique<store::ListValue>(lim.list_max_listpack_size);
    for (int i = 0; i < size; i++)
      list->PushBack(i % 3 ? std::to_string(i) : "item" + std::to_string(i));
    ks.Set(1, "list" + std::to_string(size), Value::Object(ObjType::kList, std::move(list)));

    auto iset = store::SetValue::CreateIntSet();
    for (int i = 0; i < size; i++)
      iset->Add(std::to_string(i * 7 - 100), lim.set_max_intset_entries);
    ks.Set(1, "iset" + std::to_string(size), Value::Object(ObjType::kSet, std::move(iset)));
    auto sset = store::SetValue::CreateFor("m");
    for (int i = 0; i < size; i++) sset->Add("m" + std::to_string(i), lim.set_max_intset_entries);
    ks.Set(1, "sset" + std::to_string(size), Value::Object(ObjType::kSet, std::move(sset)));

    auto z = std::make_unique<store::ZSetValue>();
    for (int i = 0; i < size; i++) z->Insert("z" + std::to_string(i), i * 0.5 - 3, lim);
    ks.Set(2, "zset" + std::to_string(size), Value::Object(ObjType::kZSet, std::move(z)));

    auto h = std::make_unique<store::HashValue>();
    for (int i = 0; i < size; i++) h->Set("f" + std::to_string(i), std::to_string(i * 3), lim);
    ks.Set(2, "hash" + std::to_string(size), Value::Object(ObjType::kHash, std::move(h)));
  }
  auto bigval = std::make_unique<store::HashValue>();
  bigval->Set("f", std::string(100, 'x'), lim);  // too long for the listpack
  ks.Set(3, "hash-longvalue", Value::Object(ObjType::kHash, std::move(bigval)));
  for (int i = 0; i < 1000; i++)
    ks.Set(15, "k" + std::to_string(i), Value::String(std::to_string(rng())));
}

inline std::string Save(Keyspace& ks, bool compression) {
  StringSink sink;
  RdbWriteOptions opts;
  opts.compression = compression;
  EXPECT_TRUE(WriteRdb(ks, sink, opts, StandardAux({"7.0.15"}), nullptr).ok());
  return sink.str();
}

}  // namespace kv::persist::rdb_test_util
