// Runs the fuzz target without libFuzzer: over the files named on the command line, or (no
// arguments) over the seed corpus and thousands of corrupted variants of it: bit flips, byte
// changes, truncations, duplicated and deleted ranges, and lengths replaced by extreme values.
// Exits non-zero only if the target crashes (which kills the process) or no input was run.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "persist/snapshot.h"
#include "store/hash_type.h"
#include "store/list_type.h"
#include "store/set_type.h"
#include "store/zset_type.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using kv::store::ObjType;
using kv::store::Value;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A snapshot written by kvstore with every type in both encodings.
std::string KvstoreSeed(bool compression) {
  kv::store::Keyspace ks(16);
  auto& lim = ks.limits();
  ks.Set(0, "s", Value::String("hello"));
  ks.Set(0, "i", Value::String("12345"));
  ks.Set(0, "z", Value::String(std::string(300, 'z')));
  kv::store::Entry* e = ks.Set(1, "t", Value::String("ttl"));
  ks.db(1).SetExpire(e, 4102444800000);
  for (int n : {3, 200}) {
    auto l = std::make_unique<kv::store::ListValue>(lim.list_max_listpack_size);
    auto si = kv::store::SetValue::CreateIntSet();
    auto ss = kv::store::SetValue::CreateFor("a");
    auto z = std::make_unique<kv::store::ZSetValue>();
    auto h = std::make_unique<kv::store::HashValue>();
    for (int i = 0; i < n; i++) {
      std::string s = std::to_string(i);
      l->PushBack(i % 2 ? s : "e" + s);
      si->Add(s, lim.set_max_intset_entries);
      ss->Add("m" + s, lim.set_max_intset_entries);
      z->Insert("m" + s, i / 3.0, lim);
      h->Set("f" + s, s, lim);
    }
    std::string sfx = std::to_string(n);
    ks.Set(2, "l" + sfx, Value::Object(ObjType::kList, std::move(l)));
    ks.Set(2, "si" + sfx, Value::Object(ObjType::kSet, std::move(si)));
    ks.Set(2, "ss" + sfx, Value::Object(ObjType::kSet, std::move(ss)));
    ks.Set(2, "z" + sfx, Value::Object(ObjType::kZSet, std::move(z)));
    ks.Set(2, "h" + sfx, Value::Object(ObjType::kHash, std::move(h)));
  }
  kv::persist::StringSink sink;
  kv::persist::RdbWriteOptions opts;
  opts.compression = compression;
  (void)kv::persist::WriteRdb(ks, sink, opts, kv::persist::StandardAux({"7.0.15"}), nullptr);
  return sink.str();
}

std::string Mutate(const std::string& in, std::mt19937_64& rng) {
  std::string s = in;
  int ops = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < ops && !s.empty(); k++) {
    size_t at = rng() % s.size();
    switch (rng() % 6) {
      case 0:
        s[at] ^= static_cast<char>(1 << (rng() % 8));
        break;
      case 1:
        s[at] = static_cast<char>(rng());
        break;
      case 2:
        s.resize(at);
        break;
      case 3: {  // duplicate a range
        size_t n = rng() % 64;
        s.insert(at, s.substr(at, n));
        break;
      }
      case 4:
        s.erase(at, rng() % 64);
        break;
      default: {  // an extreme 32- or 64-bit length
        static const char* kLens[] = {"\x80\xff\xff\xff\xff", "\x81\xff\xff\xff\xff\xff\xff\xff\xff",
                                      "\xbf\xff", "\xc3"};
        const char* l = kLens[rng() % 4];
        s.replace(at, 1, l);
      }
    }
  }
  return s;
}

void Run(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

}  // namespace

int main(int argc, char** argv) {
  size_t runs = 0;
  if (argc > 1) {
    for (int i = 1; i < argc; i++) {
      Run(ReadFile(argv[i]));
      runs++;
    }
    printf("replayed %zu inputs\n", runs);
    return runs ? 0 : 1;
  }
  std::vector<std::string> seeds = {KvstoreSeed(false), KvstoreSeed(true)};
  const char* corpus = getenv("KVSTORE_FUZZ_CORPUS");
  if (corpus && std::filesystem::is_directory(corpus)) {
    for (const auto& f : std::filesystem::directory_iterator(corpus)) seeds.push_back(ReadFile(f.path()));
  }
  std::mt19937_64 rng(12345);
  for (const auto& seed : seeds) {
    Run(seed);
    runs++;
    for (int i = 0; i < 2500; i++) {
      Run(Mutate(seed, rng));
      runs++;
    }
  }
  printf("ran %zu inputs from %zu seeds without a crash\n", runs, seeds.size());
  return 0;
}
