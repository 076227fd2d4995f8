#include "cmd/key_spec.h"

#include <utility>

#include "common/strutil.h"

namespace kv::cmd {

std::vector<std::string_view> KeyFlagNames(uint32_t flags) {
  static const std::pair<KeyFlag, std::string_view> kNames[] = {
      {kKeyRO, "RO"},         {kKeyRW, "RW"},         {kKeyOW, "OW"},
      {kKeyRM, "RM"},         {kKeyAccess, "access"}, {kKeyUpdate, "update"},
      {kKeyInsert, "insert"}, {kKeyDelete, "delete"}, {kKeyNotKey, "not_key"},
      {kKeyIncomplete, "incomplete"}, {kKeyVariableFlags, "variable_flags"},
  };
  std::vector<std::string_view> out;
  for (const auto& [f, n] : kNames) {
    if (flags & f) out.push_back(n);
  }
  return out;
}

namespace {

// Where a spec's search begins: the first key's index, 0 when a keyword is absent (the spec
// then names no keys), -1 when the spec cannot be evaluated.
int BeginOf(const BeginSearch& bs, std::span<const std::string_view> args) {
  const int argc = static_cast<int>(args.size());
  switch (bs.type) {
    case BeginSearch::Type::kIndex:
      return bs.index;
    case BeginSearch::Type::kKeyword: {
      int start = bs.startfrom > 0 ? bs.startfrom : argc + bs.startfrom;
      int end = bs.startfrom > 0 ? argc - 1 : 1;
      for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (EqualsIgnoreCase(args[i], bs.keyword)) return i + 1;
      }
      return 0;
    }
    case BeginSearch::Type::kUnknown:
      break;
  }
  return -1;
}

}  // namespace

std::optional<std::vector<KeyRef>> KeysFromSpecs(std::span<const KeySpec> specs,
                                                 std::span<const std::string_view> args) {
  std::vector<KeyRef> keys;
  if (!KeysFromSpecsInto(specs, args, &keys)) return std::nullopt;
  return keys;
}

bool KeysFromSpecsInto(std::span<const KeySpec> specs, std::span<const std::string_view> args,
                       std::vector<KeyRef>* out) {
  const int argc = static_cast<int>(args.size());
  std::vector<KeyRef>& keys = *out;
  for (const KeySpec& spec : specs) {
    if (spec.flags & kKeyNotKey) continue;
    int first = BeginOf(spec.begin, args);
    if (first < 0) return false;
    if (first == 0) continue;  // keyword not present
    int64_t last = 0;  // numkeys near INT_MAX must not overflow the sum (Redis crashes there)
    int step = 1;
    if (spec.find.type == FindKeys::Type::kRange) {
      step = spec.find.b;
      if (spec.find.a >= 0) {
        last = int64_t{first} + spec.find.a;
      } else if (spec.find.c == 0) {
        last = int64_t{argc} + spec.find.a;
      } else {
        last = int64_t{first} + ((argc - first) / spec.find.c + spec.find.a);
      }
    } else if (spec.find.type == FindKeys::Type::kKeyNum) {
      step = spec.find.c;
      if (spec.find.a >= argc || first + spec.find.a >= argc) return false;
      std::optional<int64_t> numkeys = ParseInt64(args[first + spec.find.a]);
      if (!numkeys || *numkeys < 0) return false;
      first += spec.find.b;
      // Redis narrows the count to int here, so 4294967297 counts as 1.
      last = int64_t{first} + static_cast<int>(*numkeys) - 1;
    } else {
      return false;
    }
    if (last >= argc || last < first || first >= argc) return false;
    // last < argc here, so i stays in range.
    for (int i = first; i <= last; i += step > 0 ? step : 1) keys.push_back({i, spec.flags});
    if (spec.flags & kKeyIncomplete) return false;
  }
  return true;
}

uint32_t SetKeyFlags(std::span<const std::string_view> args, int) {
  for (size_t i = 3; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "get")) return kKeyRW | kKeyAccess | kKeyUpdate;
  }
  return kKeyOW | kKeyUpdate;
}

uint32_t BitfieldKeyFlags(std::span<const std::string_view> args, int) {
  // Redis' bitfieldGetKeys: GETs (and OVERFLOWs) only read; anything else may write.
  for (size_t i = 2; i < args.size(); i++) {
    size_t remaining = args.size() - i - 1;
    if (EqualsIgnoreCase(args[i], "get") && remaining >= 2) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "overflow") && remaining >= 1) {
      i += 1;
    } else {
      return kKeyRW | kKeyAccess | kKeyUpdate;  // a write, or a syntax error (safer as RW)
    }
  }
  return kKeyRO | kKeyAccess;
}

uint32_t SortKeyFlags(std::span<const std::string_view>, int key_index) {
  return key_index == 1 ? kKeyRO | kKeyAccess : kKeyOW | kKeyUpdate;
}

}  // namespace kv::cmd
