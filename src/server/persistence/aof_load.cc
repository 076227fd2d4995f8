// Loading the AOF at startup, as Redis 7.0's loadAppendOnlyFiles and loadSingleAppendOnlyFile
// do it: the manifest, then the base (an RDB, or commands) and each increment in order, with
// the same rules for torn tails, incomplete transactions and corruption, and the same log
// lines, down to the last one of a refused start (scripts wait for it there; kvstore says
// where a format error is on a line of its own before Redis' line).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cmd/command.h"
#include "cmd/context.h"
#include "common/clock.h"
#include "common/logging.h"
#include "persist/aof_file.h"
#include "persist/rdb_format.h"
#include "persist/snapshot.h"
#include "server/client.h"
#include "server/persistence/aof.h"
#include "server/persistence/persistence.h"
#include "server/server.h"

namespace kv::server {
namespace {

// kStopped: a shutdown (signal or SHUTDOWN) came while the startup load let clients in.
enum class LoadResult { kOk, kNotExist, kEmpty, kOpenError, kFailed, kTruncated, kStopped };

bool PathExists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// Redis' fileExist: a regular file (a directory by the manifest's name counts as none).
bool RegularFileExists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A failure whose reason the log already gives: main exits without another line, so the log
// ends as Redis' does.
Status AlreadyLogged() { return Status::Corruption(""); }

// Reads and parses the manifest (a regular file) as Redis' aofLoadManifestFromFile, logging
// its lines when the manifest is unusable.
Status ReadManifest(const std::string& path, persist::AofManifest* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    LOG_WARNING("Fatal error: can't open the AOF manifest file %s for reading: %s", path.c_str(),
                strerror(errno));
    return AlreadyLogged();
  }
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  persist::AofManifestErrorAt at;
  Result<persist::AofManifest> m =
      n < 0 ? Result<persist::AofManifest>(Status::IoError("Read AOF manifest failed"))
            : persist::ParseAofManifest(text, &at);
  if (!m.ok()) {
    // Redis' lines, each ending in a newline of its own (so an empty line follows each).
    LOG_WARNING("\n*** FATAL AOF MANIFEST FILE ERROR ***\n");
    if (at.line > 0) {
      LOG_WARNING("Reading the manifest file, at line %d\n", at.line);
      // Cut where Redis cuts a log message (LOG_MAX_LEN, 1024 bytes with the NUL).
      std::string shown = ">>> '" + at.text + "'\n";
      if (shown.size() > 1023) shown.resize(1023);
      LOG_WARNING("%s", shown.c_str());
    }
    LOG_WARNING("%s\n", m.status().message().c_str());
    return AlreadyLogged();
  }
  *out = std::move(*m);
  return Status::Ok();
}

}  // namespace

// Replays one file of the AOF into the keyspace.
class AofLoader {
 public:
  AofLoader(Server& server, Aof& aof) : server_(server), aof_(aof) {}

  LoadResult LoadFile(const std::string& name, bool old_style) {
    std::string path = aof_.DirPath(name);
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      // Redis opens it, takes its size, and fails on the first read (or loads nothing from a
      // directory of size 0).
      if (st.st_size == 0) return LoadResult::kEmpty;
      LOG_WARNING("Unrecoverable error reading the append only file %s: %s", name.c_str(),
                  strerror(EISDIR));
      return LoadResult::kFailed;
    }
    auto map = persist::MappedFile::Open(path);
    if (!map.ok()) {
      if (map.status().code() == Code::kNotFound) {
        LOG_WARNING("The append log file %s doesn't exist: %s", name.c_str(), strerror(ENOENT));
        return LoadResult::kNotExist;
      }
      LOG_WARNING("Fatal error: can't open the append log file %s for reading: %s", name.c_str(),
                  map.status().message().c_str());
      return LoadResult::kOpenError;
    }
    std::string_view data = (*map)->bytes();
    if (data.empty()) return LoadResult::kEmpty;
    uint64_t start = 0;
    if (data.substr(0, 5) == "REDIS") {
      LOG_NOTICE(old_style ? "Reading RDB preamble from AOF file..."
                           : "Reading RDB base file on AOF loading...");
      persist::RdbLoadOptions opts;
      opts.now_ms = WallMs();
      opts.drop_expired = false;  // the increments may still touch them
      opts.trailing_data = true;  // a preamble's command tail, in an old-style file
      opts.verify_checksum = server_.config().GetBool("rdbchecksum") &&
                             !server_.debug_state().skip_checksum_validation;
      opts.key_load_delay_us = static_cast<int>(server_.config().GetInt("key-load-delay"));
      opts.warn = [](const std::string& w) { LOG_WARNING("RDB load: %s", w.c_str()); };
      opts.progress_bytes =
          static_cast<uint64_t>(server_.config().GetInt("loading-process-events-interval-bytes"));
      opts.progress = [this](uint64_t offset) { Progress(offset); };
      opts.stop = [this] { return server_.shutdown_requested(); };
      persist::MemorySource src(data);
      persist::RdbLoadResult res;
      Status st = persist::LoadRdb(src, server_.keyspace(), opts, &res);
      if (server_.shutdown_requested()) return LoadResult::kStopped;
      if (st.ok()) st = server_.InstallFunctions(res.functions);
      if (!st.ok()) {
        LOG_WARNING(old_style ? "Error reading the RDB preamble of the AOF file %s, AOF loading "
                                "aborted: %s"
                              : "Error reading the RDB base file %s, AOF loading aborted: %s",
                    name.c_str(), st.message().c_str());
        return LoadResult::kFailed;
      }
      keys_ += res.keys_loaded;
      start = res.bytes;
      if (old_style) LOG_NOTICE("Reading the remaining AOF tail...");
    }
    return Replay(name, path, data, start);
  }

  uint64_t commands() const { return commands_; }
  uint64_t keys() const { return keys_; }
  // The bytes of the files loaded before the next one (INFO's loading_loaded_bytes).
  void set_file_base(uint64_t bytes) { file_base_ = bytes; }

 private:
  // `offset` bytes of the current file are in: INFO shows it, and at startup the clients are
  // let in now and then (-LOADING, INFO), as between Redis' loading events.
  void Progress(uint64_t offset) {
    server_.persistence().LoadingProgress(file_base_ + offset);
    server_.YieldWhileLoading();
  }

  LoadResult Replay(const std::string& name, const std::string& path, std::string_view data,
                    uint64_t start) {
    persist::AofCommandReader reader(data.substr(start));
    // The client the commands run as: no connection, never blocked, its replies dropped.
    Client fake(server_, server_.group(0), net::Fd(), UINT64_MAX);
    fake.session().authenticated = true;
    fake.session().obey = true;
    server_.set_current_client(&fake);
    struct Restore {
      Server& s;
      ~Restore() { s.set_current_client(nullptr); }
    } restore{server_};
    bool in_multi = false;
    std::vector<std::vector<std::string_view>> queued;
    uint64_t valid_up_to = start, valid_before_multi = start;
    bool truncate_ok = server_.config().GetBool("aof-load-truncated");
    int delay_us = static_cast<int>(server_.config().GetInt("key-load-delay"));
    int64_t last_log = MonoMs();
    // Commands are parsed a batch ahead, so that the table slots of their keys are prefetched
    // together (as a client's pipeline is) instead of one cache miss after the other.
    constexpr size_t kBatch = 16;
    struct Parsed {
      std::vector<std::string_view> argv;
      uint64_t end = 0;  // file offset after it
    };
    std::vector<Parsed> batch(kBatch);
    std::vector<std::string_view> keys;
    for (;;) {
      size_t n = 0;
      auto next = persist::AofCommandReader::Next::kCommand;
      while (n < kBatch &&
             (next = reader.Read(&batch[n].argv)) == persist::AofCommandReader::Next::kCommand) {
        batch[n++].end = start + reader.offset();
      }
      keys.clear();
      for (size_t i = 0; i < n; i++) {
        std::string_view k = server_.FirstKey(batch[i].argv);
        if (!k.empty()) keys.push_back(k);
      }
      if (keys.size() > 1) server_.PrefetchKeys(fake.session().db, keys);
      int64_t now_ms = WallMs();
      for (size_t i = 0; i < n; i++) {
        const std::vector<std::string_view>& argv = batch[i].argv;
        std::string error;
        const cmd::CommandSpec* spec = cmd::ResolveCommand(server_.commands(), argv, &error);
        if (!spec) {
          // Redis' lookupCommand finds no command for an unknown name or subcommand.
          const cmd::CommandSpec* top = server_.commands().Find(argv[0]);
          if (!top || (!top->subcommands.empty() && argv.size() >= 2 && !top->FindSub(argv[1]))) {
            LOG_WARNING("Unknown command '%s' reading the append only file %s",
                        std::string(argv[0]).c_str(), name.c_str());
          } else {
            LOG_WARNING("Bad command '%s' in the append only file %s: %s",
                        std::string(argv[0]).c_str(), name.c_str(), error.c_str());
          }
          return LoadResult::kFailed;
        }
        const std::string& cmd_name = spec->parent ? spec->parent->name : spec->name;
        if (cmd_name == "multi") {
          valid_before_multi = valid_up_to;
          in_multi = true;
          queued.clear();
        } else if (cmd_name == "exec") {
          for (const auto& q : queued) {
            if (!Run(name, q, fake, now_ms)) return LoadResult::kFailed;
          }
          queued.clear();
          in_multi = false;
        } else if (in_multi) {
          queued.push_back(argv);  // views into the mapping, valid until it goes
        } else {
          Execute(spec, argv, fake, now_ms);
        }
        valid_up_to = batch[i].end;
        commands_++;
        if (delay_us != 0) persist::DebugKeyDelay(delay_us);
      }
      if ((commands_ & 1023) < n) {  // every 1024 commands or so
        Progress(valid_up_to);
        server_.set_current_client(&fake);  // another client's commands may have run
        if (server_.shutdown_requested()) return LoadResult::kStopped;
      }
      if ((commands_ & 1023) < n && MonoMs() - last_log >= 1000) {
        last_log = MonoMs();
        LOG_NOTICE("Loading AOF %s: %llu commands, %.1f%% of the file", name.c_str(),
                   static_cast<unsigned long long>(commands_),
                   100.0 * static_cast<double>(valid_up_to) / static_cast<double>(data.size()));
      }
      if (next == persist::AofCommandReader::Next::kCommand) continue;  // a full batch
      if (next == persist::AofCommandReader::Next::kEnd) {
        if (!in_multi) return LoadResult::kOk;
        // Well-formed, but the transaction never ended: handled as a torn tail.
        LOG_WARNING("Revert incomplete MULTI/EXEC transaction in AOF file %s", name.c_str());
        return TornTail(name, path, valid_before_multi, truncate_ok);
      }
      if (next == persist::AofCommandReader::Next::kTruncated) {
        return TornTail(name, path, in_multi ? valid_before_multi : valid_up_to, truncate_ok);
      }
      LOG_WARNING("The append only file %s has a bad format: %s", name.c_str(),
                  AtOffset(reader.error(), start).c_str());
      LOG_WARNING(
          "Bad file format reading the append only file %s: make a backup of your AOF file, "
          "then use ./redis-check-aof --fix <filename.manifest>",
          name.c_str());
      return LoadResult::kFailed;
    }
  }

  static std::string AtOffset(const std::string& what, uint64_t base) {
    // The reader counts from where the commands start; the log gives file offsets.
    size_t at = what.rfind("offset ");
    if (at == std::string::npos) return what;
    uint64_t off = std::stoull(what.substr(at + 7)) + base;
    return what.substr(0, at + 7) + std::to_string(off);
  }

  // A queued command of a transaction (resolved again: it was only parsed when queued).
  bool Run(const std::string& name, std::span<const std::string_view> argv, Client& fake,
           int64_t now_ms) {
    std::string error;
    const cmd::CommandSpec* spec = cmd::ResolveCommand(server_.commands(), argv, &error);
    if (!spec) {
      LOG_WARNING("Bad command '%s' in the append only file %s: %s", std::string(argv[0]).c_str(),
                  name.c_str(), error.c_str());
      return false;
    }
    Execute(spec, argv, fake, now_ms);
    return true;
  }

  void Execute(const cmd::CommandSpec* spec, std::span<const std::string_view> argv, Client& fake,
               int64_t now_ms) {
    reply_.clear();
    resp::ReplyWriter w(&reply_, 2);
    cmd::Context ctx(argv, w, server_.keyspace(), fake.session(), server_, stats_, now_ms);
    ctx.spec = spec;
    spec->handler(ctx);
    if (w.errors() > 0) {
      server_.UnexpectedErrorReply("server", "AOF-loading-client", w.last_error(), spec->name);
    }
  }

  LoadResult TornTail(const std::string& name, const std::string& path, uint64_t valid_up_to,
                      bool truncate_ok) {
    if (truncate_ok) {
      LOG_WARNING("!!! Warning: short read while loading the AOF file %s!!!", name.c_str());
      LOG_WARNING("!!! Truncating the AOF %s at offset %llu !!!", name.c_str(),
                  static_cast<unsigned long long>(valid_up_to));
      if (truncate(path.c_str(), static_cast<off_t>(valid_up_to)) != 0) {
        LOG_WARNING("Error truncating the AOF file %s: %s", name.c_str(), strerror(errno));
      } else {
        LOG_WARNING("AOF %s loaded anyway because aof-load-truncated is enabled", name.c_str());
        return LoadResult::kTruncated;
      }
    }
    LOG_WARNING(
        "Unexpected end of file reading the append only file %s. You can: 1) Make a "
        "backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "
        "2) Alternatively you can set the 'aof-load-truncated' configuration option to "
        "yes and restart the server.",
        name.c_str());
    return LoadResult::kFailed;
  }

  Server& server_;
  Aof& aof_;
  cmd::ExecStats stats_;
  std::string reply_;
  uint64_t commands_ = 0, keys_ = 0;
  uint64_t file_base_ = 0;
};

Status Aof::LoadAtStartup(bool* used) {
  *used = false;
  Config& c = server_.config();
  dir_ = c.GetString("appenddirname");
  filename_ = c.GetString("appendfilename");
  ApplySettings();
  // The manifest is read whatever appendonly says, so that a runtime `appendonly yes` or a
  // BGREWRITEAOF continues its numbering.
  std::string manifest_name = persist::AofManifestName(filename_);
  std::string manifest_path = DirPath(manifest_name);
  struct stat st;
  if (stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    LOG_DEBUG("The AOF directory %s doesn't exist", dir_.c_str());
  } else if (!RegularFileExists(manifest_path)) {
    LOG_DEBUG("The AOF manifest file %s doesn't exist", manifest_name.c_str());
  } else {
    KV_TRY(ReadManifest(manifest_path, &manifest_));
  }
  if (!c.GetBool("appendonly")) return Status::Ok();
  state_ = State::kOn;
  *used = true;
  // An old-style AOF (one file in `dir`) moves into the directory, as Redis upgrades it.
  if (PathExists(filename_)) {
    bool no_dir = !PathExists(dir_);
    bool empty = !manifest_.base && manifest_.incrs.empty();
    bool only_it = manifest_.base && manifest_.incrs.empty() && manifest_.base->name == filename_ &&
                   !PathExists(DirPath(filename_));
    if (no_dir || empty || only_it) {
      if (int err = CreateDirIfMissing(dir_); err != 0) {
        LOG_WARNING("Can't open or create append-only dir %s: %s", dir_.c_str(), strerror(err));
        return AlreadyLogged();
      }
      manifest_ = persist::AofManifest{};
      manifest_.base = persist::AofFileInfo{filename_, 1, persist::AofFileInfo::Type::kBase};
      manifest_.curr_base_seq = 1;
      if (!PersistManifest(manifest_).ok()) return AlreadyLogged();
      if (rename(filename_.c_str(), DirPath(filename_).c_str()) != 0) {
        LOG_WARNING("Error trying to move the old AOF file %s into dir %s: %s", filename_.c_str(),
                    dir_.c_str(), strerror(errno));
        return AlreadyLogged();
      }
      LOG_NOTICE("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).",
                 filename_.c_str(), dir_.c_str());
    }
  }
  // No AOF at all: nothing loaded, nothing said (Redis' AOF_NOT_EXIST).
  if (!manifest_.base && manifest_.incrs.empty()) return Status::Ok();
  int64_t start_ms = MonoMs();
  bool empty = false;
  KV_TRY(LoadFiles(&empty));
  if (server_.shutdown_requested()) return Status::Ok();  // a shutdown stopped the load
  LOG_NOTICE("DB loaded from append only file: %.3f seconds", (MonoMs() - start_ms) / 1000.0);
  return Status::Ok();
}

// Redis' loadAppendOnlyFiles: the base, then each increment, in the manifest's order.
Status Aof::LoadFiles(bool* empty) {
  *empty = false;
  std::vector<std::string> files;
  if (manifest_.base) files.push_back(manifest_.base->name);
  for (const auto& i : manifest_.incrs) files.push_back(i.name);
  int64_t total = 0, base_size = 0;
  std::vector<int64_t> sizes;
  for (const auto& f : files) {
    bool exists = false;
    int64_t size = FileSize(f, &exists);
    sizes.push_back(size);
    if (!exists) {
      LOG_WARNING("Unable to obtain the AOF file %s length. stat: %s", f.c_str(), strerror(errno));
      return AlreadyLogged();
    }
    if (manifest_.base && f == manifest_.base->name) base_size = size;
    total += size;
  }
  if (total == 0) {
    *empty = true;
    return Status::Ok();
  }
  AofLoader loader(server_, *this);
  server_.keyspace().set_loading(true);
  server_.persistence().BeginLoading(static_cast<uint64_t>(total));
  LoadResult r = LoadResult::kOk;
  uint64_t done = 0;
  for (size_t i = 0; i < files.size(); i++) {
    bool is_base = manifest_.base && i == 0;
    bool last = i + 1 == files.size();
    int64_t file_start = MonoMs();
    loader.set_file_base(done);
    r = loader.LoadFile(files[i], is_base && files[i] == filename_);
    done += static_cast<uint64_t>(sizes[i]);
    if (r == LoadResult::kOk || (r == LoadResult::kTruncated && last)) {
      LOG_NOTICE("DB loaded from %s file %s: %.3f seconds", is_base ? "base" : "incr",
                 files[i].c_str(), (MonoMs() - file_start) / 1000.0);
    }
    if (r == LoadResult::kEmpty && !is_base) r = LoadResult::kOk;
    if (r == LoadResult::kTruncated && !last) {
      LOG_WARNING("Fatal error: the truncated file is not the last file");
      r = LoadResult::kFailed;
    }
    if (r == LoadResult::kOpenError || r == LoadResult::kFailed || r == LoadResult::kNotExist ||
        r == LoadResult::kStopped) {
      break;
    }
  }
  server_.persistence().EndLoading();
  server_.keyspace().set_loading(false);
  if (r == LoadResult::kStopped) return Status::Ok();  // the server exits: nothing more to do
  if (r == LoadResult::kOpenError || r == LoadResult::kFailed || r == LoadResult::kNotExist) {
    return AlreadyLogged();
  }
  current_size_ = total;
  rewrite_base_size_ = base_size;
  fsync_size_ = total;
  return Status::Ok();
}

Status Aof::DebugLoad() {
  if (enabled()) WriteBuffer();
  server_.keyspace().FlushAll();
  // The manifest as the disk has it now (Redis' aofLoadManifestFromDisk).
  manifest_ = persist::AofManifest{};
  std::string manifest_path = DirPath(persist::AofManifestName(filename_));
  if (RegularFileExists(manifest_path)) KV_TRY(ReadManifest(manifest_path, &manifest_));
  DeleteHistory();
  if (!manifest_.base && manifest_.incrs.empty()) {
    LOG_WARNING("The AOF directory %s doesn't exist or holds no AOF file", dir_.c_str());
    return Status::NotFound("no AOF to load");
  }
  bool empty = false;
  debug_loading_.store(true, std::memory_order_release);
  Status st = LoadFiles(&empty);
  debug_loading_.store(false, std::memory_order_release);
  KV_TRY(st);
  LOG_NOTICE("Append Only File loaded by DEBUG LOADAOF");
  return Status::Ok();
}

}  // namespace kv::server
