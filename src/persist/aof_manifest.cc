#include "persist/aof_manifest.h"

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

}  // namespace

Result<AofManifest> ParseAofManifest(std::string_view text) {
  AofManifest m;
  int64_t max_seq = 0;
  size_t lines = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    lines++;
    if (text[pos] == '#') {  // a comment (Redis skips it before checking its length)
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
      continue;
    }
    // Redis reads lines with fgets into a 1024-byte buffer: a longer line, or a last line
    // without its newline, has no '\n' in what it read.
    if (nl == std::string_view::npos || nl - pos + 1 >= 1024) {
      return Invalid("The AOF manifest file contains too long line");
    }
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t b = raw.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return Invalid("Invalid AOF manifest file format");
    raw = raw.substr(b, raw.find_last_not_of(" \t\r\n") - b + 1);
    auto argv = SplitArgs(raw);
    // At least file, seq and type; pairs only.
    if (!argv || argv->size() < 6 || argv->size() % 2 != 0) {
      return Invalid("Invalid AOF manifest file format");
    }
    AofFileInfo f;
    bool have_name = false;
    char type = 0;
    for (size_t i = 0; i < argv->size(); i += 2) {
      const std::string& key = (*argv)[i];
      const std::string& value = (*argv)[i + 1];
      if (EqualsIgnoreCase(key, "file")) {
        if (value.find_first_of("/\\") != std::string::npos) {  // as pathIsBaseName
          return Invalid("File can't be a path, just a filename");
        }
        f.name = value;
        have_name = true;
      } else if (EqualsIgnoreCase(key, "seq")) {
        f.seq = std::atoll(value.c_str());  // atoll, as Redis: junk reads as 0, refused below
      } else if (EqualsIgnoreCase(key, "type")) {
        type = value.empty() ? 0 : value[0];
      }
    }
    if (!have_name || f.name.empty() || f.seq == 0 || type == 0) {
      return Invalid("Invalid AOF manifest file format");
    }
    if (type == 'b') {
      if (m.base) return Invalid("Found duplicate base file information");
      f.type = AofFileInfo::Type::kBase;
      m.curr_base_seq = f.seq;
      m.base = f;
    } else if (type == 'h') {
      f.type = AofFileInfo::Type::kHistory;
      m.history.push_back(f);
    } else if (type == 'i') {
      if (f.seq <= max_seq) return Invalid("Found a non-monotonic sequence number");
      f.type = AofFileInfo::Type::kIncr;
      m.curr_incr_seq = max_seq = f.seq;
      m.incrs.push_back(f);
    } else {
      return Invalid("Unknown AOF file type");
    }
  }
  if (lines == 0) return Invalid("Found an empty AOF manifest");
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
