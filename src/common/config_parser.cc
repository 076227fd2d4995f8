#include "common/config_parser.h"

#include <fstream>
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
  std::vector<ConfigDirective> out;
  int i = 1;
  if (i < argc && std::string_view(argv[i]).substr(0, 2) != "--") {
    auto file = ParseConfigFile(argv[i]);
    if (!file.ok()) return file.status();
    out = std::move(*file);
    i++;
  }
  for (; i < argc; i++) {
    std::string_view a = argv[i];
    if (a.substr(0, 2) != "--" || a.size() == 2)
      return Status::Invalid("unexpected argument '" + std::string(a) + "' (options are --name value)");
    ConfigDirective d;
    d.name = ToLower(a.substr(2));
    d.origin = "argv";
    while (i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--") {
      d.args.emplace_back(argv[++i]);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace kv
