// The manifest of Redis 7.0's multi-part append-only file: which base, history and incremental
// files make up the AOF in `appenddirname`, in the exact text redis-server writes and reads
// ("file NAME seq N type b|h|i", one line each: the base first, then history, then increments),
// with the file names Redis gives them. The AOF itself (issue 23) builds on this; nothing else
// uses it yet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kv::persist {

struct AofFileInfo {
  enum class Type : char { kBase = 'b', kHistory = 'h', kIncr = 'i' };
  std::string name;
  int64_t seq = 0;
  Type type = Type::kBase;
  bool operator==(const AofFileInfo&) const = default;
};

struct AofManifest {
  std::optional<AofFileInfo> base;
  std::vector<AofFileInfo> history;
  std::vector<AofFileInfo> incrs;  // by seq, ascending
  int64_t curr_base_seq = 0;
  int64_t curr_incr_seq = 0;
  bool operator==(const AofManifest&) const = default;
};

// Where a manifest failed to parse, for the log: the line as Redis counts lines (each read of
// at most 1024 bytes, comments included) and its text without surrounding blanks. `line` is 0
// when the error concerns no single line (an empty manifest, a line too long).
struct AofManifestErrorAt {
  int line = 0;
  std::string text;
};

// Parses a manifest as Redis 7.0's aofLoadManifestFromFile does, with its error messages:
// lines are read as fgets reads them into a 1025-byte buffer (a longer line, or a last one
// without its newline, is "too long"; the rest of a long comment is read as a line of its
// own), "#" lines are skipped, keys other than file/seq/type are ignored (forward
// compatibility), a second base, a non-monotonic increment sequence, a path for a name or an
// unknown type fail. On an error, `*at` (when given) says where.
Result<AofManifest> ParseAofManifest(std::string_view text, AofManifestErrorAt* at = nullptr);
// The manifest's text as redis-server writes it (names quoted where Redis quotes them).
std::string FormatAofManifest(const AofManifest& m);

// Redis' file names: "<appendfilename>.<seq>.base.rdb" (".base.aof" without the RDB preamble),
// "<appendfilename>.<seq>.incr.aof", "<appendfilename>.manifest" and its temporary
// "temp-<appendfilename>.manifest".
std::string AofBaseName(const std::string& appendfilename, int64_t seq, bool rdb_preamble);
std::string AofIncrName(const std::string& appendfilename, int64_t seq);
std::string AofManifestName(const std::string& appendfilename);
std::string AofTempManifestName(const std::string& appendfilename);

}  // namespace kv::persist
