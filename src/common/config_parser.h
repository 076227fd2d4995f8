// Reads configuration in redis.conf syntax: one directive a line ("name arg arg"), '#' comments,
// quoting as sdssplitargs, `include path`. Command-line overrides ("--port 7000 --save ''") are
// turned into the same directives. The meaning of each directive belongs to the caller.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace kv {

struct ConfigDirective {
  std::string name;                // lower-cased
  std::vector<std::string> args;
  std::string origin;  // "file:line", for error messages
  std::string line;    // the line as written (trimmed), quoted by error messages
  int lineno = 0;      // its number in the text it came from (0: not from a text)
};

// Parses the text of a config file. `origin` names it in errors; includes are resolved
// relative to the working directory, as Redis does.
Result<std::vector<ConfigDirective>> ParseConfigText(const std::string& text,
                                                     const std::string& origin, int depth = 0);
Result<std::vector<ConfigDirective>> ParseConfigFile(const std::string& path, int depth = 0);

// Parses a server command line as Redis does: [config-file] [-] [--name value ...], the options
// appended to the file (and to standard input, for "-") as lines. The values following a
// "--name" argument belong to it ("--save 900 1 --port 7000", "--logfile --x"); so do those in
// the same argument ("--maxmemory 700mb").
Result<std::vector<ConfigDirective>> ParseCommandLine(int argc, const char* const* argv);

}  // namespace kv
