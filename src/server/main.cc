// kvstore-server [config-file] [--name value ...]
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/config_parser.h"
#include "common/cpu_affinity.h"
#include "common/logging.h"
#include "server/config/config.h"
#include "server/crash.h"
#include "server/daemon.h"
#include "server/proc_title.h"
#include "server/server.h"

namespace {
constexpr const char* kVersion = kv::kRedisCompatVersion;

void Usage() {
  fprintf(stderr,
          "Usage: kvstore-server [/path/to/kvstore.conf] [--name value ...]\n"
          "       kvstore-server --version\n\n"
          "Examples:\n"
          "       kvstore-server --port 7000 --dir ./data2\n"
          "       kvstore-server /etc/kvstore.conf --loglevel verbose\n");
}
}  // namespace

int main(int argc, char** argv) {
  kv::server::InitProcTitle(argc, argv);
  // One malloc arena for every thread. glibc gives threads arenas of their own, and such an
  // arena grows one page per mprotect() call: a replica loading a 1 GB snapshot spent a quarter
  // of its loader thread in mprotect; the main arena grows by brk() in 128 KiB steps or more.
  // Commands allocate under the keyspace lock anyway, and glibc's per-thread cache serves small
  // sizes without the arena's lock. MALLOC_ARENA_MAX in the environment still decides.
  if (getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
  if (argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v"))) {
    printf("kvstore server v=%s (Redis-compatible) bits=64\n", kVersion);
    return 0;
  }
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    Usage();
    return 0;
  }
  auto directives = kv::ParseCommandLine(argc, argv);
  if (!directives.ok()) {
    fprintf(stderr, "%s\n", directives.status().message().c_str());
    Usage();
    return 1;
  }
  auto config = std::make_unique<kv::server::Config>();
  kv::Status s = config->Load(*directives);
  if (!s.ok()) {
    fprintf(stderr, "\n%s\n", s.message().c_str());
    return 1;
  }
  if (argc > 1 && strncmp(argv[1], "--", 2) != 0) {
    // Absolute, because the server changes into `dir` next and CONFIG REWRITE needs the file.
    char* abs = realpath(argv[1], nullptr);
    config->set_config_file(abs ? abs : argv[1]);
    free(abs);
  }
  std::string logfile = config->GetString("logfile");
  if (!logfile.empty() && !kv::SetLogFile(logfile)) {
    fprintf(stderr, "Can't open the log file: %s\n", logfile.c_str());
    return 1;
  }
  if (config->GetBool("syslog-enabled")) {
    kv::EnableSyslog(config->GetString("syslog-ident"),
                     kv::SyslogFacility(config->GetString("syslog-facility")));
  }
  std::string dir = config->GetString("dir");
  if (chdir(dir.c_str()) != 0) {
    fprintf(stderr, "Can't chdir to '%s': %s\n", dir.c_str(), strerror(errno));
    return 1;
  }
  // CONFIG GET dir reports the absolute working directory, as Redis does.
  if (char* cwd = getcwd(nullptr, 0)) {
    (void)config->Load({{"dir", {cwd}, "startup"}});
    free(cwd);
  }
  // Before any thread exists: only the calling thread survives a fork.
  bool daemonize = config->GetBool("daemonize");
  std::string supervised = config->GetString("supervised");
  if (daemonize) {
    if (kv::Status d = kv::server::Daemonize(); !d.ok()) {
      fprintf(stderr, "%s\n", d.message().c_str());
      return 1;
    }
  }
  std::unique_ptr<kv::server::PidFile> pidfile;
  if (std::string path = config->GetString("pidfile"); daemonize || !path.empty()) {
    pidfile = std::make_unique<kv::server::PidFile>(path.empty() ? kv::server::kDefaultPidFile
                                                                 : path);
  }

  if (config->GetBool("disable-thp")) {
    if (std::string said = kv::server::DisableTransparentHugePages(); !said.empty()) {
      LOG_NOTICE("%s", said.c_str());
    }
  }

  // Signals are taken synchronously by WaitForShutdown; every thread inherits this mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // As Redis: a closed terminal, or the kernel's SIGHUP to a stopped job whose process group
  // is orphaned (its SIGCONT follows), leaves the server running.
  signal(SIGHUP, SIG_IGN);

  // Before the threads start: each pins itself by its role (server_cpulist, bio_cpulist).
  kv::SetThreadCpuLists(config->GetString("server_cpulist"), config->GetString("bio_cpulist"));
  kv::PinThreadForRole(kv::ThreadRole::kServer);
  kv::server::SetCrashLogEnabled(config->GetBool("crash-log-enabled"));
  kv::server::SetUseExitOnPanic(config->GetBool("use-exit-on-panic"));
  LOG_NOTICE("kvstore %s (Redis %s compatible) starting, pid=%d", kv::kKvstoreVersion, kVersion,
             static_cast<int>(getpid()));
  kv::server::Server server(std::move(config));
  s = server.Start();
  if (!s.ok()) {
    // An error without a message was logged where it happened, in Redis' words; its line
    // stays the log's last (scripts wait for it there).
    if (!s.message().empty()) LOG_WARNING("%s", s.message().c_str());
    return 1;
  }
  if (auto said = kv::server::NotifySupervisor(supervised); !said.ok()) {
    LOG_WARNING("%s", said.status().message().c_str());
  } else if (!said->empty()) {
    LOG_NOTICE("%s", said->c_str());
  }
  server.WaitForShutdown();
  return 0;
}
