#include "persist/aof_manifest.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/strutil.h"

namespace kv::persist {
namespace {

// Redis' sdsneedsrepr: a name with these characters is written quoted.
bool NeedsQuoting(std::string_view s) {
  for (unsigned char c : s) {
    if (c == '\\' || c == '"' || c == '\n' || c == '\r' || c == '\t' || c == '\a' || c == '\b' ||
        !isprint(c) || isspace(c)) {
      return true;
    }
  }
  return false;
}

void AppendLine(std::string* out, const AofFileInfo& f) {
  *out += "file ";
  *out += NeedsQuoting(f.name) ? QuoteString(f.name) : f.name;
  *out += " seq " + std::to_string(f.seq) + " type ";
  *out += static_cast<char>(f.type);
  *out += '\n';
}

Status Invalid(const char* why) { return Status::Invalid(why); }

// Redis reads the manifest with fgets into a buffer of MANIFEST_MAX_LINE + 1 (1025) bytes.
constexpr size_t kMaxManifestRead = 1024;

}  // namespace

Result<AofManifest> ParseAofManifest(std::string_view text, AofManifestErrorAt* at) {
  AofManifest m;
  int64_t max_seq = 0;
  int linenum = 0;
  size_t pos = 0;
  std::string_view line;  // the trimmed line, once it is past the length check
  bool have_line = false;
  auto fail = [&](const char* why) -> Result<AofManifest> {
    if (at) *at = have_line ? AofManifestErrorAt{linenum, std::string(line)} : AofManifestErrorAt{};
    return Invalid(why);
  };
  while (pos < text.size()) {
    // One fgets into Redis' buffer: through the newline, or 1024 bytes, or to the end.
    size_t limit = std::min(text.size(), pos + kMaxManifestRead);
    size_t nl = text.find('\n', pos);
    bool has_nl = nl != std::string_view::npos && nl < limit;
    std::string_view chunk = text.substr(pos, (has_nl ? nl + 1 : limit) - pos);
    pos += chunk.size();
    linenum++;
    have_line = false;
    if (chunk[0] == '#') continue;  // a comment (skipped before its length is checked)
    if (!has_nl) return fail("The AOF manifest file contains too long line");
    size_t b = chunk.find_first_not_of(" \t\r\n");
    line = b == std::string_view::npos ? std::string_view()
                                       : chunk.substr(b, chunk.find_last_not_of(" \t\r\n") - b + 1);
    have_line = true;
    if (line.empty()) return fail("Invalid AOF manifest file format");
    auto argv = SplitArgs(line);
    // At least file, seq and type; pairs only.
    if (!argv || argv->size() < 6 || argv->size() % 2 != 0) {
      return fail("Invalid AOF manifest file format");
    }
    AofFileInfo f;
    bool have_name = false;
    char type = 0;
    for (size_t i = 0; i < argv->size(); i += 2) {
      const std::string& key = (*argv)[i];
      const std::string& value = (*argv)[i + 1];
      if (EqualsIgnoreCase(key, "file")) {
        if (value.find_first_of("/\\") != std::string::npos) {  // as pathIsBaseName
          return fail("File can't be a path, just a filename");
        }
        f.name = value;
        have_name = true;
      } else if (EqualsIgnoreCase(key, "seq")) {
        f.seq = std::atoll(value.c_str());  // atoll, as Redis: junk reads as 0, refused below
      } else if (EqualsIgnoreCase(key, "type")) {
        type = value.empty() ? 0 : value[0];
      }
    }
    // An empty name passes, as in Redis (loading then fails on the directory itself).
    if (!have_name || f.seq == 0 || type == 0) return fail("Invalid AOF manifest file format");
    if (type == 'b') {
      if (m.base) return fail("Found duplicate base file information");
      f.type = AofFileInfo::Type::kBase;
      m.curr_base_seq = f.seq;
      m.base = f;
    } else if (type == 'h') {
      f.type = AofFileInfo::Type::kHistory;
      m.history.push_back(f);
    } else if (type == 'i') {
      if (f.seq <= max_seq) return fail("Found a non-monotonic sequence number");
      f.type = AofFileInfo::Type::kIncr;
      m.curr_incr_seq = max_seq = f.seq;
      m.incrs.push_back(f);
    } else {
      return fail("Unknown AOF file type");
    }
  }
  if (linenum == 0) return fail("Found an empty AOF manifest");
  return m;
}

std::string FormatAofManifest(const AofManifest& m) {
  std::string out;
  if (m.base) AppendLine(&out, *m.base);
  for (const auto& f : m.history) AppendLine(&out, f);
  for (const auto& f : m.incrs) AppendLine(&out, f);
  return out;
}

std::string AofBaseName(const std::string& appendfilename, int64_t seq, bool rdb_preamble) {
  return appendfilename + "." + std::to_string(seq) + ".base" + (rdb_preamble ? ".rdb" : ".aof");
}

std::string AofIncrName(const std::string& appendfilename, int64_t seq) {
  return appendfilename + "." + std::to_string(seq) + ".incr.aof";
}

std::string AofManifestName(const std::string& appendfilename) {
  return appendfilename + ".manifest";
}

std::string AofTempManifestName(const std::string& appendfilename) {
  return "temp-" + AofManifestName(appendfilename);
}

}  // namespace kv::persist
