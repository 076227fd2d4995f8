// Introspection commands: CONFIG and TIME (INFO lives in info.cc, COMMAND in command_cmds.cc).
#include <algorithm>

#include "cmd/context.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/client.h"
#include "server/client_eviction.h"
#include "server/evict.h"
#include "server/server.h"

namespace kv::server {

void RegisterInfoCommand(cmd::CommandTable& t);     // info.cc
void RegisterCommandCommand(cmd::CommandTable& t);  // command_cmds.cc

namespace {

using cmd::CommandSpec;
using cmd::Context;

// ---- CONFIG ------------------------------------------------------------------------------

void ConfigGet(Context& c) {
  std::vector<std::string> patterns;
  for (size_t i = 2; i < c.argc(); i++) patterns.emplace_back(c.arg(i));
  auto pairs = ServerOf(c).config().Get(patterns);
  c.out.Map(pairs.size());
  for (const auto& [name, value] : pairs) {
    c.out.Bulk(name);
    c.out.Bulk(value);
  }
}

void ConfigSet(Context& c) {
  if (c.argc() % 2 != 0) {
    c.Error(cmd::OpStatus::kSyntax);
    return;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 2; i + 1 < c.argc(); i += 2) {
    pairs.emplace_back(c.arg(i), c.arg(i + 1));
    if (ServerOf(c).config().IsSensitive(pairs.back().first)) c.Redact(i + 1);
  }
  // As Redis' DENY_LOADING_CONFIG: appendonly and dir do not change while data loads (a
  // protected dir is refused as such first, by SetMany's order of checks).
  repl::Replica& replica = ServerOf(c).replica();
  bool loading = replica.loading() || replica.async_loading() || ServerOf(c).loading_at_startup();
  bool protected_ok = ServerOf(c).config().Allows("enable-protected-configs",
                                                  ServerOf(c).current_client().is_local());
  for (const auto& [name, value] : pairs) {
    if (loading &&
        (EqualsIgnoreCase(name, "appendonly") || (protected_ok && EqualsIgnoreCase(name, "dir")))) {
      c.Error(Server::kLoadingError);
      return;
    }
  }
  Status s = ServerOf(c).config().SetMany(pairs, ServerOf(c).current_client().is_local());
  if (!s.ok()) {
    c.Error(s.message());
    return;
  }
  c.out.Ok();
}

// Redis' resetServerStats plus the command table: everything INFO counts except what describes
// the present (connected clients, changes since the last save, peak memory).
void ConfigResetStat(Context& c) {
  Server& s = ServerOf(c);
  ServerStats& st = s.stats();
  st.total_connections = 0;
  st.rejected_connections = 0;
  st.net_input_bytes.Reset();
  st.net_output_bytes.Reset();
  st.total_commands = 0;
  st.total_error_replies = 0;
  st.error_codes.clear();
  st.unexpected_error_replies = 0;
  st.reply_buffer_shrinks = 0;
  st.reply_buffer_expands = 0;
  s.primary().sync_stats() = {};
  st.exec = {};
  std::fill(std::begin(st.sample_time), std::end(st.sample_time), 0);
  std::fill(std::begin(st.sample_cmds), std::end(st.sample_cmds), 0);
  std::fill(std::begin(st.sample_in), std::end(st.sample_in), 0);
  std::fill(std::begin(st.sample_out), std::end(st.sample_out), 0);
  st.sample_idx = 0;
  s.commands().ResetStats();
  s.ResetCommandLatencies();
  s.keyspace().ResetStats();
  s.evictor().ResetStats();
  s.client_eviction().ResetStats();
  c.out.Ok();
}

void ConfigRewrite(Context& c) {
  Config& config = ServerOf(c).config();
  if (config.config_file().empty()) {
    c.Error("The server is running without a config file");
    return;
  }
  Status s = config.Rewrite(config.config_file());
  if (!s.ok()) {
    LOG_WARNING("CONFIG REWRITE failed: %s", s.message().c_str());
    c.Error(s.message());
    return;
  }
  LOG_NOTICE("CONFIG REWRITE executed with success.");
  c.out.Ok();
}

void ConfigHelp(Context& c) {
  static constexpr std::string_view kLines[] = {
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
  };
  c.ReplyHelp(kLines);
}

// Containers never run themselves: ResolveCommand dispatches to a subcommand or fails arity.
void Container(Context& c) { c.Error(cmd::UnknownSubcommand(c.arg(1), c.arg(0))); }

// ---- TIME --------------------------------------------------------------------------------

void Time(Context& c) {
  int64_t us = WallUs();
  c.out.Array(2);
  c.out.Bulk(std::to_string(us / 1000000));
  c.out.Bulk(std::to_string(us % 1000000));
}

// ---- registration ------------------------------------------------------------------------

void RegisterConfigCommand(cmd::CommandTable& t) {
  using namespace cmd;
  CommandSpec* config = t.Add({.name = "config",
                               .arity = -2,
                               .handler = Container,
                               .group = "server",
                               .summary = "A container for server configuration commands",
                               .since = "2.0.0"});
  auto sub = [&](const char* name, int arity, uint32_t flags, Handler h, const char* summary,
                 const char* since) {
    t.AddSub(config, {.name = name,
                      .arity = arity,
                      .flags = flags | kLoading | kStale,
                      .handler = h,
                      .group = "server",
                      .summary = summary,
                      .since = since});
  };
  const uint32_t kAdminFlags = kAdmin | kNoScript;
  sub("get", -3, kAdminFlags, ConfigGet, "Get the values of configuration parameters", "2.0.0");
  sub("set", -4, kAdminFlags, ConfigSet, "Set configuration parameters to the given values",
      "2.0.0");
  sub("resetstat", 2, kAdminFlags, ConfigResetStat, "Reset the stats returned by INFO", "2.0.0");
  sub("rewrite", 2, kAdminFlags, ConfigRewrite,
      "Rewrite the configuration file with the in memory configuration", "2.8.0");
  sub("help", 2, 0, ConfigHelp, "Show helpful text about the different subcommands", "5.0.0");
}

}  // namespace

void RegisterInfoCommands(cmd::CommandTable& t) {
  RegisterInfoCommand(t);
  RegisterConfigCommand(t);
  RegisterCommandCommand(t);
  t.Add({.name = "time",
         .arity = 1,
         .flags = cmd::kLoading | cmd::kStale | cmd::kFast,
         .handler = Time,
         .group = "server",
         .summary = "Return the current server time",
         .since = "2.6.0"});
}

}  // namespace kv::server
