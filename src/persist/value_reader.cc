#include "persist/value_reader.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "common/lzf.h"
#include "common/strutil.h"
#include "persist/blob_encodings.h"
#include "persist/listpack.h"
#include "persist/rdb_format.h"
#include "store/hash_type.h"
#include "store/list_type.h"
#include "store/set_type.h"
#include "store/stream_type.h"
#include "store/zset_type.h"

namespace kv::persist {
namespace {

// LZF cannot expand data by more than this factor (a 2-byte reference yields up to 264 bytes).
constexpr uint64_t kLzfMaxRatio = 133;

uint64_t GetBE(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

int64_t GetLESigned(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  uint64_t m = 1ULL << (8 * n - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

// A packed encoding that fails its check, in Redis' words ("Zset ziplist integrity check
// failed."), which tools look for in the log, followed by what was wrong with it.
Status Integrity(Status st, const char* encoding) {
  if (st.ok() || st.code() != Code::kCorruption) return st;
  return Status::Corruption(std::string(encoding) + " integrity check failed. (" + st.message() +
                            ")");
}

}  // namespace

Status ValueReader::CheckCount(uint64_t n, const char* what) {
  if (n > src_.remaining()) {
    return Status::Corruption(std::string(what) + " count " + std::to_string(n) +
                              " exceeds the remaining data");
  }
  return Status::Ok();
}

Result<uint8_t> ValueReader::ReadByte() {
  KV_TRY_ASSIGN(v, src_.Read(1));
  return static_cast<uint8_t>(v[0]);
}

Result<uint64_t> ValueReader::ReadLen(bool* encoded) {
  if (encoded) *encoded = false;
  KV_TRY_ASSIGN(b, ReadByte());
  uint8_t kind = b >> 6;
  if (kind == kLenEncoded) {
    if (!encoded) return Status::Corruption("encoded string where a length was expected");
    *encoded = true;
    return static_cast<uint64_t>(b & 0x3F);
  }
  if (kind == kLen6Bit) return static_cast<uint64_t>(b & 0x3F);
  if (kind == kLen14Bit) {
    KV_TRY_ASSIGN(n, ReadByte());
    return (static_cast<uint64_t>(b & 0x3F) << 8) | n;
  }
  if (b == kLen32Bit) {
    KV_TRY_ASSIGN(v, src_.Read(4));
    return GetBE(v.data(), 4);
  }
  if (b == kLen64Bit) {
    KV_TRY_ASSIGN(v, src_.Read(8));
    return GetBE(v.data(), 8);
  }
  return Status::Corruption("unknown length encoding " + std::to_string(b));
}

Result<std::pair<uint64_t, uint64_t>> ValueReader::ReadLzfLengths() {
  KV_TRY_ASSIGN(clen, ReadLen());
  KV_TRY_ASSIGN(ulen, ReadLen());
  if (ulen == 0 || clen == 0 || ulen / kLzfMaxRatio > clen) {
    return Status::Corruption("impossible LZF lengths (compressed " + std::to_string(clen) +
                              ", original " + std::to_string(ulen) + ")");
  }
  return std::pair{clen, ulen};
}

namespace {
// A string longer than a value holds (a file from a server whose proto-max-bulk-len allowed
// it): refused whole, never stored cut short.
Status TooLong(uint64_t len) {
  return Status::Corruption("a string of " + std::to_string(len) +
                            " bytes, longer than the longest value kvstore holds (" +
                            std::to_string(store::Value::kMaxStrLen) + " bytes)");
}
}  // namespace

Result<std::string_view> ValueReader::ReadString(std::string& scratch) {
  bool encoded = false;
  KV_TRY_ASSIGN(len, ReadLen(&encoded));
  if (!encoded) {
    if (len > store::Value::kMaxStrLen) return TooLong(len);
    return src_.Read(len);
  }
  if (len == kEncInt8 || len == kEncInt16 || len == kEncInt32) {
    int n = len == kEncInt8 ? 1 : len == kEncInt16 ? 2 : 4;
    KV_TRY_ASSIGN(v, src_.Read(n));
    scratch = std::to_string(GetLESigned(v.data(), n));
    return std::string_view(scratch);
  }
  if (len != kEncLzf) return Status::Corruption("unknown string encoding " + std::to_string(len));
  KV_TRY_ASSIGN(lens, ReadLzfLengths());
  auto [clen, ulen] = lens;
  if (ulen > store::Value::kMaxStrLen) return TooLong(ulen);
  KV_TRY_ASSIGN(c, src_.Read(clen));
  scratch.resize(ulen);
  if (!LzfDecompress(c.data(), c.size(), scratch.data(), ulen)) {
    return Status::Corruption("invalid LZF compressed string");
  }
  return std::string_view(scratch);
}

Result<double> ValueReader::ReadStringDouble() {
  KV_TRY_ASSIGN(n, ReadByte());
  if (n == 253) return std::nan("");
  if (n == 254) return HUGE_VAL;
  if (n == 255) return -HUGE_VAL;
  KV_TRY_ASSIGN(v, src_.Read(n));
  std::string text(v);
  char* end = nullptr;
  double d = strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return Status::Corruption("invalid double value");
  return d;
}

Result<store::Value> ValueReader::ReadList(uint8_t type) {
  auto list = std::make_unique<store::ListValue>(limits_.list_max_listpack_size,
                                                 limits_.list_compress_depth);
  auto push = [&](std::string_view s) {
    list->PushBack(s);
    return Status::Ok();
  };
  if (type == kRdbList) {
    KV_TRY_ASSIGN(n, ReadLen());
    KV_TRY(CheckCount(n, "list"));
    for (uint64_t i = 0; i < n; i++) {
      KV_TRY_ASSIGN(s, ReadString(scratch_a_));
      list->PushBack(s);
    }
  } else if (type == kRdbListZiplist) {
    KV_TRY_ASSIGN(blob, ReadString(scratch_a_));
    KV_TRY(Integrity(ForEachZiplistEntry(blob, push), "List ziplist"));
  } else {  // quicklist of ziplists, or quicklist-2 of listpacks and plain nodes
    // Each saved node keeps its form, whatever the packed threshold now is, as in Redis.
    auto append = [&](std::string_view s) {
      list->AppendLoaded(s, false);
      return Status::Ok();
    };
    KV_TRY_ASSIGN(nodes, ReadLen());
    KV_TRY(CheckCount(nodes, "quicklist node"));
    for (uint64_t i = 0; i < nodes; i++) {
      uint64_t container = kQuicklistPacked;
      if (type == kRdbListQuicklist2) {
        KV_TRY_ASSIGN(c, ReadLen());
        container = c;
        if (c != kQuicklistPacked && c != kQuicklistPlain) {
          return Integrity(
              Status::Corruption("unknown quicklist node container " + std::to_string(c)),
              "Quicklist");
        }
      }
      KV_TRY_ASSIGN(blob, ReadString(scratch_a_));
      // Redis refuses an empty node of either container (a plain node holds one element, a
      // packed one at least its header).
      if (blob.empty()) return Status::Corruption("empty quicklist node");
      if (container == kQuicklistPlain) {
        list->AppendLoaded(blob, true);
      } else if (type == kRdbListQuicklist2) {
        KV_TRY(Integrity(ForEachListpackEntry(blob, append), "Listpack"));
      } else {
        KV_TRY(Integrity(ForEachZiplistEntry(blob, append), "Ziplist"));
      }
    }
  }
  return store::Value::Object(store::ObjType::kList, std::move(list));
}

Result<store::Value> ValueReader::ReadSet(uint8_t type) {
  std::unique_ptr<store::SetValue> set;
  size_t max_intset = limits_.set_max_intset_entries;
  auto add = [&](std::string_view m) -> Status {
    if (!set) set = store::SetValue::CreateFor(m);
    if (!set->Add(m, max_intset)) return Status::Corruption("duplicate set members detected");
    return Status::Ok();
  };
  if (type == kRdbSet) {
    KV_TRY_ASSIGN(n, ReadLen());
    KV_TRY(CheckCount(n, "set"));
    for (uint64_t i = 0; i < n; i++) {
      KV_TRY_ASSIGN(m, ReadString(scratch_a_));
      KV_TRY(add(m));
    }
  } else if (type == kRdbSetIntset) {
    KV_TRY_ASSIGN(blob, ReadString(scratch_a_));
    set = store::SetValue::CreateIntSet();
    char num[24];
    auto add_number = [&](int64_t v) {
      int n = snprintf(num, sizeof(num), "%lld", static_cast<long long>(v));
      return add(std::string_view(num, static_cast<size_t>(n)));
    };
    KV_TRY(Integrity(ForEachIntsetMember(blob, add_number), "Intset"));
  } else {  // kRdbSetListpack
    KV_TRY_ASSIGN(blob, ReadString(scratch_a_));
    KV_TRY(Integrity(ForEachListpackEntry(blob, add), "Set listpack"));
  }
  if (!set) set = store::SetValue::CreateIntSet();
  return store::Value::Object(store::ObjType::kSet, std::move(set));
}

Result<store::Value> ValueReader::ReadZSet(uint8_t type) {
  std::vector<std::pair<std::string, double>> items;
  if (type == kRdbZSet || type == kRdbZSet2) {
    KV_TRY_ASSIGN(n, ReadLen());
    KV_TRY(CheckCount(n, "sorted set"));
    for (uint64_t i = 0; i < n; i++) {
      KV_TRY_ASSIGN(m, ReadString(scratch_a_));
      std::string member(m);
      double score;
      if (type == kRdbZSet2) {
        KV_TRY_ASSIGN(raw, src_.Read(8));
        memcpy(&score, raw.data(), 8);
      } else {
        KV_TRY_ASSIGN(d, ReadStringDouble());
        score = d;
      }
      items.emplace_back(std::move(member), score);
    }
  } else {  // listpack or ziplist of alternating member, score
    KV_TRY_ASSIGN(blob, ReadString(scratch_a_));
    bool want_member = true;
    auto fn = [&](std::string_view s) -> Status {
      if (want_member) {
        items.emplace_back(std::string(s), 0.0);
      } else {
        auto d = ParseDouble(s);
        if (!d) return Status::Corruption("invalid sorted set score");
        items.back().second = *d;
      }
      want_member = !want_member;
      return Status::Ok();
    };
    const char* encoding = type == kRdbZSetListpack ? "Zset listpack" : "Zset ziplist";
    KV_TRY(Integrity(
        type == kRdbZSetListpack ? ForEachListpackEntry(blob, fn) : ForEachZiplistEntry(blob, fn),
        encoding));
    if (!want_member) {
      return Integrity(Status::Corruption("an odd element count"), encoding);
    }
  }
  std::vector<store::ZEntry> entries;
  entries.reserve(items.size());
  for (const auto& [m, s] : items) {
    if (std::isnan(s)) return Status::Corruption("sorted set with a NaN score");
    entries.push_back({m, s});
  }
  std::sort(entries.begin(), entries.end(), [](const store::ZEntry& a, const store::ZEntry& b) {
    return a.member < b.member;
  });
  for (size_t i = 1; i < entries.size(); i++) {
    if (entries[i].member == entries[i - 1].member) {
      return Status::Corruption("duplicate sorted set members detected");
    }
  }
  std::sort(entries.begin(), entries.end(), [](const store::ZEntry& a, const store::ZEntry& b) {
    return store::ZLess(a.score, a.member, b.score, b.member);
  });
  return store::Value::Object(store::ObjType::kZSet,
                              store::ZSetValue::FromSorted(entries, limits_));
}

Result<store::Value> ValueReader::ReadHash(uint8_t type) {
  auto hash = std::make_unique<store::HashValue>();
  auto set = [&](std::string_view f, std::string_view v) -> Status {
    if (!hash->Set(f, v, limits_)) return Status::Corruption("duplicate hash fields detected");
    return Status::Ok();
  };
  if (type == kRdbHash) {
    KV_TRY_ASSIGN(n, ReadLen());
    KV_TRY(CheckCount(n, "hash"));
    // Redis loads a hash too long for the listpack straight into a table.
    if (n > limits_.hash_max_listpack_entries) hash->ConvertToHashtable();
    for (uint64_t i = 0; i < n; i++) {
      KV_TRY_ASSIGN(f, ReadString(scratch_a_));
      std::string field(f);
      KV_TRY_ASSIGN(v, ReadString(scratch_b_));
      KV_TRY(set(field, v));
    }
  } else if (type == kRdbHashZipmap) {
    KV_TRY_ASSIGN(blob, ReadString(scratch_a_));
    KV_TRY(Integrity(ForEachZipmapPair(blob, set), "Zipmap"));
  } else {  // listpack or ziplist of alternating field, value
    KV_TRY_ASSIGN(blob, ReadString(scratch_a_));
    std::string field;
    bool want_field = true;
    auto fn = [&](std::string_view s) -> Status {
      want_field = !want_field;
      if (!want_field) {
        field.assign(s);
        return Status::Ok();
      }
      return set(field, s);
    };
    const char* encoding = type == kRdbHashListpack ? "Hash listpack" : "Hash ziplist";
    KV_TRY(Integrity(
        type == kRdbHashListpack ? ForEachListpackEntry(blob, fn) : ForEachZiplistEntry(blob, fn),
        encoding));
    if (!want_field) return Integrity(Status::Corruption("an odd element count"), encoding);
  }
  return store::Value::Object(store::ObjType::kHash, std::move(hash));
}

Result<uint64_t> ValueReader::ReadMillis() {
  KV_TRY_ASSIGN(v, src_.Read(8));
  return static_cast<uint64_t>(GetLESigned(v.data(), 8));
}

// Redis 7.0's rdbLoadObject for streams: the nodes (a 16-byte big-endian master ID, then the
// listpack, each checked deeply), the stream's counters, then each consumer group with its
// global PEL and its consumers, whose PELs must name entries of the global one. Types 15 (no
// first ID, tombstone or counters; Redis 5 and 6) and 21 (consumers with an active time;
// Redis 7.2) load too.
Result<store::Value> ValueReader::ReadStream(uint8_t type) {
  using store::StreamID;
  auto s = std::make_unique<store::StreamValue>();
  auto read_id = [&]() -> Result<StreamID> {
    KV_TRY_ASSIGN(ms, ReadLen());
    KV_TRY_ASSIGN(seq, ReadLen());
    return StreamID{ms, seq};
  };
  auto raw_id = [](std::string_view b) {
    return StreamID{GetBE(b.data(), 8), GetBE(b.data() + 8, 8)};
  };
  KV_TRY_ASSIGN(nodes, ReadLen());
  KV_TRY(CheckCount(nodes, "stream node"));
  for (uint64_t i = 0; i < nodes; i++) {
    KV_TRY_ASSIGN(key, ReadString(scratch_a_));
    if (key.size() != 16) {
      return Status::Corruption("Stream node key entry is not the size of a stream ID");
    }
    StreamID master = raw_id(key);
    KV_TRY_ASSIGN(lp, ReadString(scratch_b_));
    if (!store::StreamValue::ValidateNode(master, lp)) {
      return Status::Corruption("Stream listpack integrity check failed.");
    }
    if (s->nodes().count(master)) {
      return Status::Corruption("Listpack re-added with existing key");
    }
    s->AddNode(master, store::StreamListpack::FromBytes(lp));
  }
  KV_TRY_ASSIGN(length, ReadLen());
  s->set_length(length);
  KV_TRY_ASSIGN(last, read_id());
  s->set_last_id(last);
  if (type >= kRdbStreamListpacks2) {
    KV_TRY_ASSIGN(first, read_id());
    s->set_first_id(first);
    KV_TRY_ASSIGN(max_deleted, read_id());
    s->set_max_deleted_id(max_deleted);
    KV_TRY_ASSIGN(added, ReadLen());
    s->set_entries_added(added);
  } else {
    // Redis <= 6.2 kept no counters: entries-added starts at the length, no tombstone is
    // known, and the first ID is the first live entry's (the greatest ID when there is none).
    s->set_entries_added(length);
    StreamID first = StreamID::Max();
    s->EdgeId(true, &first);
    s->set_first_id(first);
  }
  if (length && s->nodes().empty()) {
    return Status::Corruption("Stream length inconsistent with rax entries");
  }
  KV_TRY_ASSIGN(groups, ReadLen());
  KV_TRY(CheckCount(groups, "stream consumer group"));
  for (uint64_t g = 0; g < groups; g++) {
    KV_TRY_ASSIGN(name_view, ReadString(scratch_a_));
    std::string name(name_view);
    auto group = std::make_unique<store::StreamGroup>();
    KV_TRY_ASSIGN(gid, read_id());
    group->last_id = gid;
    if (type >= kRdbStreamListpacks2) {
      KV_TRY_ASSIGN(read, ReadLen());
      group->entries_read = static_cast<int64_t>(read);
    } else {
      group->entries_read = s->EstimateDistance(gid);  // as XGROUP CREATE would set it
    }
    KV_TRY_ASSIGN(pel, ReadLen());
    KV_TRY(CheckCount(pel, "stream PEL"));
    for (uint64_t i = 0; i < pel; i++) {
      KV_TRY_ASSIGN(raw, src_.Read(16));
      StreamID id = raw_id(raw);
      auto nack = std::make_unique<store::StreamNack>();
      KV_TRY_ASSIGN(t, ReadMillis());
      nack->delivery_time = static_cast<int64_t>(t);
      KV_TRY_ASSIGN(count, ReadLen());
      nack->delivery_count = count;
      if (!group->pel.emplace(id, std::move(nack)).second) {
        return Status::Corruption("Duplicated global PEL entry loading stream consumer group");
      }
    }
    KV_TRY_ASSIGN(consumers, ReadLen());
    KV_TRY(CheckCount(consumers, "stream consumer"));
    for (uint64_t c = 0; c < consumers; c++) {
      KV_TRY_ASSIGN(cname, ReadString(scratch_a_));
      auto consumer = std::make_unique<store::StreamConsumer>();
      consumer->name = std::string(cname);
      KV_TRY_ASSIGN(seen, ReadMillis());
      consumer->seen_time = static_cast<int64_t>(seen);
      if (type >= kRdbStreamListpacks3) KV_TRY(ReadMillis().status());  // active time
      KV_TRY_ASSIGN(cpel, ReadLen());
      KV_TRY(CheckCount(cpel, "stream consumer PEL"));
      for (uint64_t i = 0; i < cpel; i++) {
        KV_TRY_ASSIGN(raw, src_.Read(16));
        StreamID id = raw_id(raw);
        auto it = group->pel.find(id);
        if (it == group->pel.end()) {
          return Status::Corruption("Consumer entry not found in group global PEL");
        }
        it->second->consumer = consumer.get();
        if (!consumer->pel.emplace(id, it->second.get()).second) {
          return Status::Corruption(
              "Duplicated consumer PEL entry  loading a stream consumer group");
        }
      }
      std::string key = consumer->name;
      if (!group->consumers.emplace(std::move(key), std::move(consumer)).second) {
        return Status::Corruption("Duplicate stream consumer detected.");
      }
    }
    for (const auto& [id, nack] : group->pel) {
      if (!nack->consumer) return Status::Corruption("Stream CG PEL entry without consumer");
    }
    if (!s->groups().emplace(std::move(name), std::move(group)).second) {
      return Status::Corruption("Duplicated consumer group name");
    }
  }
  return store::Value::Object(store::ObjType::kStream, std::move(s));
}

Status ValueReader::SkipModuleData() {
  while (true) {
    KV_TRY_ASSIGN(op, ReadLen());
    switch (op) {
      case kModuleOpEof:
        return Status::Ok();
      case kModuleOpSint:
      case kModuleOpUint: {
        KV_TRY_ASSIGN(v, ReadLen());
        (void)v;
        break;
      }
      case kModuleOpFloat:
        KV_TRY(src_.Read(4).status());
        break;
      case kModuleOpDouble:
        KV_TRY(src_.Read(8).status());
        break;
      case kModuleOpString:
        KV_TRY(ReadString(scratch_a_).status());
        break;
      default:
        return Status::Corruption("unknown module data opcode " + std::to_string(op));
    }
  }
}

Status ValueReader::SkipString() {
  bool encoded = false;
  KV_TRY_ASSIGN(len, ReadLen(&encoded));
  if (!encoded) return src_.Skip(len);
  if (len == kEncInt8 || len == kEncInt16 || len == kEncInt32) {
    return src_.Skip(len == kEncInt8 ? 1 : len == kEncInt16 ? 2 : 4);
  }
  if (len != kEncLzf) return Status::Corruption("unknown string encoding " + std::to_string(len));
  KV_TRY_ASSIGN(lens, ReadLzfLengths());
  return src_.Skip(lens.first);
}

Status ValueReader::SkipObject(uint8_t type) {
  switch (type) {
    case kRdbString:
    case kRdbListZiplist:
    case kRdbSetIntset:
    case kRdbSetListpack:
    case kRdbZSetZiplist:
    case kRdbZSetListpack:
    case kRdbHashZipmap:
    case kRdbHashZiplist:
    case kRdbHashListpack:
      return SkipString();  // one string, or one encoded blob
    case kRdbList:
    case kRdbSet:
    case kRdbListQuicklist:
    case kRdbListQuicklist2: {
      KV_TRY_ASSIGN(n, ReadLen());
      KV_TRY(CheckCount(n, "list, set or quicklist node"));
      for (uint64_t i = 0; i < n; i++) {
        if (type == kRdbListQuicklist2) KV_TRY(ReadLen().status());  // the node's container
        KV_TRY(SkipString());
      }
      return Status::Ok();
    }
    case kRdbHash:
    case kRdbZSet:
    case kRdbZSet2: {
      KV_TRY_ASSIGN(n, ReadLen());
      KV_TRY(CheckCount(n, type == kRdbHash ? "hash" : "sorted set"));
      for (uint64_t i = 0; i < n; i++) {
        KV_TRY(SkipString());
        if (type == kRdbHash) {
          KV_TRY(SkipString());
        } else if (type == kRdbZSet2) {
          KV_TRY(src_.Skip(8));
        } else {
          KV_TRY(ReadStringDouble().status());
        }
      }
      return Status::Ok();
    }
    case kRdbModule2: {
      KV_TRY(ReadLen().status());
      return SkipModuleData();
    }
    default: {
      bool skipped;
      std::string why;
      return ReadObject(type, &skipped, &why).status();  // the same error
    }
  }
}

Result<store::Value> ValueReader::ReadObject(uint8_t type, bool* skipped, std::string* why) {
  *skipped = false;
  switch (type) {
    case kRdbString: {
      KV_TRY_ASSIGN(s, ReadString(scratch_a_));
      return store::Value::String(s);
    }
    case kRdbList:
    case kRdbListZiplist:
    case kRdbListQuicklist:
    case kRdbListQuicklist2:
      return ReadList(type);
    case kRdbSet:
    case kRdbSetIntset:
    case kRdbSetListpack:
      return ReadSet(type);
    case kRdbZSet:
    case kRdbZSet2:
    case kRdbZSetZiplist:
    case kRdbZSetListpack:
      return ReadZSet(type);
    case kRdbHash:
    case kRdbHashZipmap:
    case kRdbHashZiplist:
    case kRdbHashListpack:
      return ReadHash(type);
    case kRdbModule2: {
      KV_TRY_ASSIGN(id, ReadLen());
      KV_TRY(SkipModuleData());
      *skipped = true;
      *why = "value of module type id " + std::to_string(id) + " (no modules in kvstore)";
      return store::Value();
    }
    case kRdbStreamListpacks:
    case kRdbStreamListpacks2:
    case kRdbStreamListpacks3:
      return ReadStream(type);
    default:
      return Status::Corruption("unknown value type " + std::to_string(type));
  }
}

}  // namespace kv::persist
