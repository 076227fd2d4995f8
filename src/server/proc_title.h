// The process title, as redis-server sets it (set-proc-title, proc-title-template): what ps and
// top show for the server and for its snapshot children.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kv::server {

// Called first in main, before anything reads argv or the environment: moves both out of the
// memory the kernel shows as the command line, so that SetProcTitle can write there. argv
// stays valid (its strings are copies).
void InitProcTitle(int argc, char** argv);
// The command line as InitProcTitle found it (DEBUG RESTART runs it again); empty before.
const std::vector<std::string>& OriginalArgv();

// Shows `title` as the command line (cut to the room the original command line had). Does
// nothing before InitProcTitle.
void SetProcTitle(const std::string& title);

// Expands a proc-title-template: "{name}" is replaced by var(name), "{{" is a literal "{"; an
// unknown name (var answers nullopt) or an unterminated "{" is an error. The result is trimmed
// of spaces at both ends, as Redis does.
Result<std::string> ExpandProcTitle(
    std::string_view tmpl, const std::function<std::optional<std::string>(std::string_view)>& var);

class Config;

// The title `tmpl` gives with this configuration's values: {title} (what is running: argv[0]
// for the server, the child's name for a snapshot child), {listen-addr} (first bind address
// or "*", ":", the port; "unixsocket:PATH" without a TCP port), {server-mode} (empty: kvstore
// has no cluster or sentinel mode), {config-file}, {port}, {tls-port}, {unixsocket}.
// As Redis validates a template: one that expands, with an empty {title}, to nothing is
// invalid too.
Result<std::string> ProcTitle(const Config& c, std::string_view tmpl, const std::string& title);

}  // namespace kv::server
