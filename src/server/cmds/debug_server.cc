// DEBUG's actions on the server as a whole: its testing switches (PAUSE-CRON, AOF-FLUSH-SLEEP,
// SET-SKIP-CHECKSUM-VALIDATION, SET-DISABLE-DENY-SCRIPTS, REPLYBUFFER; debug_state.h), the list
// packed threshold (QUICKLIST-PACKED-THRESHOLD), LOADAOF, CHANGE-REPL-ID, RESTART and
// CRASH-AND-RECOVER, LOG, LEAK, OOM, STRINGMATCH-TEST, and the answers for what kvstore lacks
// (cluster mode). Arities, reply texts and errors are
// Redis 7.0's.
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster.h"
#include "cmd/errors.h"
#include "common/glob.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "server/client_eviction.h"
#include "server/cmds/debug_cmds.h"
#include "server/crash.h"
#include "server/persistence/aof.h"
#include "server/proc_title.h"
#include "server/server.h"
#include "store/list_type.h"

extern char** environ;

namespace kv::server::debug {
namespace {

// Redis reads these flags with atoi: anything that is not a non-zero number is 0.
int AtoiArg(cmd::Context& c, size_t i) { return atoi(std::string(c.arg(i)).c_str()); }

// Redis' restartServer: optionally the config rewrite and a proper shutdown (the AOF's last
// writes, the final snapshot), then every descriptor but the standard three closed and the
// same executable run again with the same arguments, in this process. Returns only on a
// failure before the point of no return (logged).
void RestartServer(Server& s, bool graceful, int64_t delay_ms) {
  const char* exe = "/proc/self/exe";  // this binary, even if its file was replaced since
  if (access(exe, X_OK) == -1) {
    LOG_WARNING("Can't restart: this process has no permissions to execute %s", exe);
    return;
  }
  if (graceful) {
    Config& config = s.config();
    if (!config.config_file().empty()) {
      Status st = config.Rewrite(config.config_file());
      if (!st.ok()) {
        LOG_WARNING("Can't restart: configuration rewrite process failed: %s",
                    st.message().c_str());
        return;
      }
    }
    if (!s.PrepareShutdown(/*save=*/false, /*nosave=*/false, /*force=*/false).ok()) {
      LOG_WARNING("Can't restart: error preparing for shutdown");
      return;
    }
  }
  // The command line the server started with; a config file by its absolute path, as the
  // server resolved it (the working directory may have changed since, to `dir`).
  std::vector<std::string> args = OriginalArgv();
  if (args.empty()) {
    LOG_WARNING("Can't restart: the command line is unknown");
    return;
  }
  if (args.size() > 1 && args[1].rfind("--", 0) != 0 && !s.config().config_file().empty()) {
    args[1] = s.config().config_file();
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  long max_fd = sysconf(_SC_OPEN_MAX);
  for (int fd = 3; fd < (max_fd > 0 ? max_fd : 65536); fd++) close(fd);
  if (delay_ms > 0) usleep(static_cast<useconds_t>(delay_ms * 1000));
  execve(exe, argv.data(), environ);
  _exit(1);  // nothing left to go back to
}

}  // namespace

void LoadAof(cmd::Context& c) {
  Server& s = ServerOf(c);
  Client& caller = s.current_client();
  Status st = s.aof().DebugLoad();
  s.set_current_client(&caller);
  if (!st.ok()) {
    c.Error("Error trying to load the AOF files, check server logs.");
    return;
  }
  s.ForgetChangesOfThisCommand();  // what was loaded is what the files hold
  c.out.Ok();
}

void ChangeReplId(cmd::Context& c) {
  LOG_NOTICE("Changing replication IDs after receiving DEBUG change-repl-id");
  ServerOf(c).primary().ChangeReplId();
  c.out.Ok();
}

void PauseCron(cmd::Context& c) {
  ServerOf(c).debug_state().pause_cron = AtoiArg(c, 2) != 0;
  c.out.Ok();
}

void AofFlushSleep(cmd::Context& c) {
  ServerOf(c).debug_state().aof_flush_sleep_us = AtoiArg(c, 2);
  c.out.Ok();
}

void SetSkipChecksumValidation(cmd::Context& c) {
  ServerOf(c).debug_state().skip_checksum_validation = AtoiArg(c, 2) != 0;
  c.out.Ok();
}

void SetDisableDenyScripts(cmd::Context& c) {
  ServerOf(c).debug_state().disable_deny_scripts = AtoiArg(c, 2) != 0;
  c.out.Ok();
}

namespace {

// Redis' memtoull, quirks included: digits then an optional unit (b, k, kb, m, mb, g, gb, any
// case); no sign, no spaces; the text ends at a NUL byte, an empty number is 0, digits past
// 2^64 read as its maximum, and the product wraps around as unsigned arithmetic does.
std::optional<uint64_t> MemToUll(std::string_view s) {
  s = s.substr(0, s.find('\0'));
  if (!s.empty() && s[0] == '-') return std::nullopt;
  size_t digits = 0;
  while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') digits++;
  std::string_view unit = s.substr(digits);
  uint64_t mul;
  if (unit.empty() || EqualsIgnoreCase(unit, "b")) {
    mul = 1;
  } else if (EqualsIgnoreCase(unit, "k")) {
    mul = 1000;
  } else if (EqualsIgnoreCase(unit, "kb")) {
    mul = 1024;
  } else if (EqualsIgnoreCase(unit, "m")) {
    mul = 1000 * 1000;
  } else if (EqualsIgnoreCase(unit, "mb")) {
    mul = 1024 * 1024;
  } else if (EqualsIgnoreCase(unit, "g")) {
    mul = 1000ULL * 1000 * 1000;
  } else if (EqualsIgnoreCase(unit, "gb")) {
    mul = 1024ULL * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  if (digits >= 128) return std::nullopt;  // Redis' 128-byte buffer
  uint64_t v = 0;
  for (size_t i = 0; i < digits; i++) {
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) {  // strtoull saturates
      v = UINT64_MAX;
      break;
    }
    v = v * 10 + d;
  }
  return v * mul;
}

}  // namespace

// The size from which a list element gets a plain node of its own (store::ListPackedThreshold);
// 0 restores the default. Process-wide, as in Redis.
void QuicklistPackedThreshold(cmd::Context& c) {
  std::optional<uint64_t> sz = MemToUll(c.arg(2));
  if (!sz || !store::SetListPackedThreshold(*sz)) {
    c.Error("argument must be a memory value bigger than 1 and smaller than 4gb");
    return;
  }
  c.out.Ok();
}

// The cron's resizing of the clients' reply buffers (client_buffers.cc): PEAK-RESET-TIME
// <ms|NEVER|RESET> sets how often a client's peak is reset, RESIZING <0|1> turns it off or on
// (any text atoi reads as non-zero turns it on, as in Redis).
void ReplyBuffer(cmd::Context& c) {
  std::string_view what = c.arg(2);
  DebugState& debug = ServerOf(c).debug_state();
  if (EqualsIgnoreCase(what, "peak-reset-time")) {
    int64_t ms = 0;
    if (EqualsIgnoreCase(c.arg(3), "never")) {
      ms = -1;
    } else if (EqualsIgnoreCase(c.arg(3), "reset")) {
      ms = DebugState::kReplyBufferPeakResetMs;
    } else if (!c.ParseInt(c.arg(3), &ms)) {
      return;
    }
    debug.reply_buffer_peak_reset_ms.store(ms, std::memory_order_relaxed);
  } else if (EqualsIgnoreCase(what, "resizing")) {
    debug.reply_buffer_resizing.store(AtoiArg(c, 3) != 0, std::memory_order_relaxed);
  } else {
    c.Error(cmd::SubcommandSyntax(c.arg(1), c.arg(0)));
    return;
  }
  c.out.Ok();
}

// The buckets of client eviction (client_eviction.h), while maxmemory-clients is set.
void ClientEviction(cmd::Context& c) {
  server::ClientEviction& ev = ServerOf(c).client_eviction();
  if (!ev.enabled()) {
    c.Error("maxmemory-clients is disabled.");
    return;
  }
  c.out.Verbatim(ev.DescribeBuckets(), "txt");
}

// As in a Redis server out of cluster mode: the filter is kept, and there is no cluster bus
// for it to drop packets from.
void DropClusterPacketFilter(cmd::Context& c) {
  int64_t type = 0;
  if (!c.ParseInt(c.arg(2), &type)) return;
  // Outside cluster mode there is no bus: the filter has nothing to drop (Redis sets it anyway).
  if (cluster::Cluster* cl = ServerOf(c).cluster()) cl->set_drop_filter(static_cast<int>(type));
  c.out.Ok();
}

void ClusterLink(cmd::Context& c) {
  if (!EqualsIgnoreCase(c.arg(2), "kill")) {
    c.Error(cmd::SubcommandSyntax(c.arg(1), c.arg(0)));
    return;
  }
  cluster::Cluster* cl = ServerOf(c).cluster();
  if (!cl) {
    c.Error("Debug option only available for cluster mode enabled setup!");
    return;
  }
  std::string error = cl->DebugKillLinks(c.arg(3), c.arg(4));
  if (!error.empty()) {
    c.Error(error);
    return;
  }
  c.out.Ok();
}

void ConfigRewriteForceAll(cmd::Context& c) {
  Config& config = ServerOf(c).config();
  if (config.config_file().empty()) {
    // Redis passes the missing path on and fails on it.
    c.Error(std::string("CONFIG-REWRITE-FORCE-ALL failed: ") + strerror(EFAULT));
    return;
  }
  Status st = config.Rewrite(config.config_file(), /*force_all=*/true);
  if (!st.ok()) {
    c.Error("CONFIG-REWRITE-FORCE-ALL failed: " + st.message());
    return;
  }
  c.out.Ok();
}

// RESTART [ms] (graceful) and CRASH-AND-RECOVER [ms]; a negative delay is none.
void Restart(cmd::Context& c) {
  int64_t delay = 0;
  if (c.argc() >= 3) {
    if (!c.ParseInt(c.arg(2), &delay)) return;
    if (delay < 0) delay = 0;
  }
  RestartServer(ServerOf(c), EqualsIgnoreCase(c.arg(1), "restart"), delay);
  c.Error("failed to restart the server. Check server logs.");
}

void Log(cmd::Context& c) {
  LOG_WARNING("DEBUG LOG: %s", std::string(c.arg(2)).c_str());
  c.out.Ok();
}

// Leaks a copy of the argument on purpose (leak checkers' tests).
void Leak(cmd::Context& c) {
  auto* leaked = new std::string(c.arg(2));
  (void)leaked;
  c.out.Ok();
}

// An allocation no machine can satisfy, and what kvstore does when one fails: a panic.
void Oom(cmd::Context& c) {
  volatile size_t size = SIZE_MAX;
  void* p = malloc(size);
  if (!p) {
    KV_PANIC("kvstore aborting for OUT OF MEMORY. Allocating " + std::to_string(size) + " bytes!");
  }
  free(p);
  c.out.Ok();
}

// Redis' stringmatchlen_fuzz_test: ten million random patterns against random strings (of
// 0 to 31 bytes below 128), to show the matcher neither crashes nor runs away.
void StringmatchTest(cmd::Context& c) {
  char str[32], pat[32];
  uint64_t matches = 0;
  for (int cycle = 0; cycle < 10000000; cycle++) {
    size_t slen = static_cast<size_t>(rand()) % sizeof(str);
    size_t plen = static_cast<size_t>(rand()) % sizeof(pat);
    for (size_t j = 0; j < slen; j++) str[j] = static_cast<char>(rand() % 128);
    for (size_t j = 0; j < plen; j++) pat[j] = static_cast<char>(rand() % 128);
    matches += GlobMatch(std::string_view(pat, plen), std::string_view(str, slen));
  }
  printf("total matches: %llu\n", static_cast<unsigned long long>(matches));
  c.out.Simple("Apparently Redis did not crash: test passed");
}

}  // namespace kv::server::debug
