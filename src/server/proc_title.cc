#include "server/proc_title.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "common/strutil.h"
#include "server/config/config.h"
#include "server/server.h"

extern char** environ;

namespace kv::server {
namespace {
char* g_area = nullptr;  // the original command line (and environment after it, where adjacent)
size_t g_area_size = 0;

std::vector<std::string>& SavedArgv() {
  static std::vector<std::string> argv;
  return argv;
}
}  // namespace

const std::vector<std::string>& OriginalArgv() { return SavedArgv(); }

void InitProcTitle(int argc, char** argv) {
  if (argc <= 0 || argv[0] == nullptr || g_area != nullptr) return;
  SavedArgv().assign(argv, argv + argc);
  // The room: argv's strings and the environment's, as long as they follow each other.
  char* end = argv[0];
  for (int i = 0; i < argc; i++) {
    if (argv[i] == end) end = argv[i] + strlen(argv[i]) + 1;
  }
  size_t env_count = 0;
  while (environ != nullptr && environ[env_count] != nullptr) env_count++;
  for (size_t i = 0; i < env_count; i++) {
    if (environ[i] == end) end = environ[i] + strlen(environ[i]) + 1;
  }
  // Copies, so nothing points into the area once the title overwrites it.
  auto** env = new char*[env_count + 1];
  for (size_t i = 0; i < env_count; i++) env[i] = strdup(environ[i]);
  env[env_count] = nullptr;
  environ = env;
  g_area = argv[0];
  g_area_size = static_cast<size_t>(end - argv[0]);
  for (int i = 0; i < argc; i++) argv[i] = strdup(argv[i]);
  program_invocation_name = argv[0];
  const char* slash = strrchr(argv[0], '/');
  program_invocation_short_name = slash ? const_cast<char*>(slash + 1) : argv[0];
}

void SetProcTitle(const std::string& title) {
  if (g_area == nullptr || g_area_size == 0) return;
  size_t n = std::min(title.size(), g_area_size - 1);
  memcpy(g_area, title.data(), n);
  memset(g_area + n, 0, g_area_size - n);
}

Result<std::string> ExpandProcTitle(
    std::string_view tmpl, const std::function<std::optional<std::string>(std::string_view)>& var) {
  std::string out;
  size_t p = 0;
  while (p < tmpl.size()) {
    size_t open = tmpl.find('{', p);
    if (open == std::string_view::npos) {
      out.append(tmpl.substr(p));
      break;
    }
    out.append(tmpl.substr(p, open - p));
    if (open + 1 >= tmpl.size()) return Status::Invalid("unterminated variable");
    if (tmpl[open + 1] == '{') {  // "{{": a literal brace
      out += '{';
      p = open + 2;
      continue;
    }
    size_t close = tmpl.find('}', open + 1);
    if (close == std::string_view::npos) return Status::Invalid("unterminated variable");
    auto value = var(tmpl.substr(open + 1, close - open - 1));
    if (!value) return Status::Invalid("unknown variable");
    out += *value;
    p = close + 1;
  }
  size_t first = out.find_first_not_of(' ');
  if (first == std::string::npos) return std::string();
  return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

Result<std::string> ProcTitle(const Config& c, std::string_view tmpl, const std::string& title) {
  auto var = [&](std::string_view name) -> std::optional<std::string> {
    std::string port = std::to_string(c.GetInt("port"));
    if (name == "title") return title;
    if (name == "listen-addr") {
      // The TCP port, else the TLS port, else the Unix socket (Redis' order).
      int64_t listen = c.GetInt("port") != 0 ? c.GetInt("port") : c.GetInt("tls-port");
      if (listen == 0) return "unixsocket:" + c.GetString("unixsocket");
      auto bind = SplitArgs(c.GetString("bind")).value_or(std::vector<std::string>{});
      return (bind.empty() ? std::string("*") : bind[0]) + ":" + std::to_string(listen);
    }
    if (name == "server-mode") return std::string();
    if (name == "config-file") return c.config_file();
    if (name == "port") return port;
    if (name == "tls-port") return std::to_string(c.GetInt("tls-port"));
    if (name == "unixsocket") return c.GetString("unixsocket");
    return std::nullopt;
  };
  auto r = ExpandProcTitle(tmpl, var);
  if (!r.ok() || (title.empty() && r->empty())) {
    return Status::Invalid("template format is invalid or contains unknown variables");
  }
  return r;
}

// The server's side: its title, and its snapshot children's, kept ready for them.
void Server::UpdateProcTitle() {
  // Before the listeners exist CONFIG's startup pass has nothing to show yet.
  if (!listening_ || !config_->GetBool("set-proc-title")) return;
  std::string tmpl = config_->GetString("proc-title-template");
  auto title = [&](const std::string& what) {
    auto t = ProcTitle(*config_, tmpl, what);
    return t.ok() ? *t : what;
  };
  SetProcTitle(title(program_invocation_name));
  bgsave_title_ = title("kvstore-rdb-bgsave");
  to_replicas_title_ = title("kvstore-rdb-to-replicas");
  aof_rewrite_title_ = title("kvstore-aof-rewrite");
}

void Server::ShowChildProcTitle(ChildKind kind) const {
  const std::string& title = kind == ChildKind::kToReplicas   ? to_replicas_title_
                             : kind == ChildKind::kAofRewrite ? aof_rewrite_title_
                                                              : bgsave_title_;
  if (!title.empty()) SetProcTitle(title);  // empty: set-proc-title no
}

}  // namespace kv::server
