#include "common/config_parser.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "common/strutil.h"

namespace kv {

Result<std::vector<ConfigDirective>> ParseConfigText(const std::string& text,
                                                     const std::string& origin, int depth) {
  std::vector<ConfigDirective> out;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    auto args = SplitArgs(line);
    std::string where = origin + ":" + std::to_string(lineno);
    if (!args) return Status::Invalid("unbalanced quotes in configuration line at " + where);
    if (args->empty()) continue;
    ConfigDirective d;
    d.name = ToLower((*args)[0]);
    d.args.assign(args->begin() + 1, args->end());
    d.origin = where;
    d.lineno = lineno;
    size_t last = line.find_last_not_of(" \t\r");
    d.line = line.substr(start, last - start + 1);
    if (d.name == "include") {
      if (d.args.size() != 1) return Status::Invalid("include takes one path at " + where);
      if (depth > 16) return Status::Invalid("include nesting too deep at " + where);
      auto sub = ParseConfigFile(d.args[0], depth + 1);
      if (!sub.ok()) return sub.status();
      for (auto& s : *sub) out.push_back(std::move(s));
      continue;
    }
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<ConfigDirective>> ParseConfigFile(const std::string& path, int depth) {
  std::ifstream f(path);
  if (!f) return Status::IoError("cannot open config file '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseConfigText(ss.str(), path, depth);
}

Result<std::vector<ConfigDirective>> ParseCommandLine(int argc, const char* const* argv) {
  // As Redis' main(): the options become redis.conf text, "--name" opening a line and every
  // other argument appended quoted, so a value may itself start with "--" ("--logfile --x"), a
  // name may carry its values in one argument ("--maxmemory 700mb"), and a line with too many
  // or too few values is refused with that line quoted.
  std::string file_text;
  std::string origin = "argv";
  int i = 1;
  if (i < argc && argv[i][0] != '-') {
    std::ifstream f(argv[i]);
    if (!f) return Status::IoError("cannot open config file '" + std::string(argv[i]) + "'");
    std::stringstream ss;
    ss << f.rdbuf();
    file_text = ss.str();
    origin = argv[i];
    i++;
  }
  std::string options;
  bool from_stdin = false;
  bool last_has_value = true;  // Redis' handled_last_config_arg
  for (; i < argc; i++) {
    std::string_view a = argv[i];
    if (a == "-" && (i == 1 || i == argc - 1)) {
      from_stdin = true;
    } else if (last_has_value && a.substr(0, 2) == "--") {
      if (!options.empty()) options += "\n";
      options += std::string(a.substr(2)) + " ";
      auto words = SplitArgs(a);
      if (words && words->size() == 1) {
        // A name alone: its values follow, even those starting with "--". "--save" followed
        // by another option (or last) means `save ""`, as Redis 7.0.1 and later read it.
        last_has_value = false;
        if (EqualsIgnoreCase(a, "--save") &&
            (i == argc - 1 || std::string_view(argv[i + 1]).substr(0, 2) == "--")) {
          options += "\"\"";
          last_has_value = true;
        }
      } else {
        last_has_value = true;  // "--name value" in one argument
      }
    } else {
      options += QuoteString(a) + " ";
      last_has_value = true;
    }
  }
  std::string text = file_text;
  if (from_stdin) {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text += "\n" + ss.str();
  }
  if (!options.empty()) text += "\n" + options;
  return ParseConfigText(text, origin);
}

}  // namespace kv
