#include "cluster/nodes_conf.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "common/logging.h"
#include "common/strutil.h"

namespace kv::cluster {
namespace {

constexpr int kBusPortOffset = 10000;  // a file without "@cport" implies port + 10000
constexpr std::string_view kCorrupt = "Unrecoverable error: corrupted cluster config file";

// The flags field's names, in the order Redis writes them.
constexpr std::pair<uint16_t, std::string_view> kFlagNames[] = {
    {kFlagMyself, "myself"}, {kFlagMaster, "master"},
    {kFlagReplica, "slave"}, {kFlagPFail, "fail?"},
    {kFlagFail, "fail"},     {kFlagHandshake, "handshake"},
    {kFlagNoAddr, "noaddr"}, {kFlagNoFailover, "nofailover"},
};

// An error for line `lineno`; a long line (a node with thousands of single slots) is shortened
// so that the message stays readable in a log.
Status LineError(int lineno, std::string_view line, const std::string& why) {
  constexpr size_t kMaxShown = 200;
  std::string shown(line.substr(0, kMaxShown));
  if (line.size() > kMaxShown) shown += "...";
  return Status::Corruption(std::string(kCorrupt) + ", line " + std::to_string(lineno) + " (\"" +
                            shown + "\"): " + why);
}

bool ValidName(std::string_view s) {
  if (s.size() != static_cast<size_t>(kNameLen)) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

std::optional<int> ParseBounded(std::string_view s, int max) {
  auto v = ParseInt64(s);
  if (!v || *v < 0 || *v > max) return std::nullopt;
  return static_cast<int>(*v);
}

// ip:port[@cport][,hostname[,aux=value]...]
Status ParseAddress(std::string_view field, NodeInfo* n) {
  size_t comma = field.find(',');
  std::string_view addr = field.substr(0, comma);
  if (comma != std::string_view::npos) {
    std::string_view rest = field.substr(comma + 1);
    size_t next = rest.find(',');
    n->hostname = std::string(rest.substr(0, next));
    // Redis 7.2 appends "name=value" fields (shard-id, nodename, tcp-port, tls-port); 7.0 has
    // nothing to keep them in, nor has kvstore.
    while (next != std::string_view::npos) {
      rest = rest.substr(next + 1);
      next = rest.find(',');
      std::string_view aux = rest.substr(0, next);
      size_t eq = aux.find('=');
      if (eq == 0 || eq == std::string_view::npos) {
        return Status::Corruption("bad auxiliary field \"" + std::string(aux) + "\"");
      }
    }
  }
  size_t colon = addr.rfind(':');
  if (colon == std::string_view::npos) return Status::Corruption("no ':' in the address");
  n->ip = std::string(addr.substr(0, colon));
  std::string_view ports = addr.substr(colon + 1);
  size_t at = ports.find('@');
  auto port = ParseBounded(ports.substr(0, at), 65535);
  if (!port) return Status::Corruption("bad port");
  n->port = *port;
  if (at == std::string_view::npos) {
    n->cport = n->port + kBusPortOffset;
  } else {
    auto cport = ParseBounded(ports.substr(at + 1), 65535);
    if (!cport) return Status::Corruption("bad cluster bus port");
    n->cport = *cport;
  }
  return Status::Ok();
}

Status ParseFlags(std::string_view field, uint16_t* flags) {
  *flags = 0;
  size_t start = 0;
  while (true) {
    size_t comma = field.find(',', start);
    std::string_view name = field.substr(start, comma - start);
    bool known = EqualsIgnoreCase(name, "noflags");
    for (const auto& [bit, text] : kFlagNames) {
      if (EqualsIgnoreCase(name, text)) {
        *flags |= bit;
        known = true;
      }
    }
    if (!known) return Status::Corruption("Unknown flag \"" + std::string(name) + "\"");
    if (comma == std::string_view::npos) return Status::Ok();
    start = comma + 1;
  }
}

// "[<slot>->-<name>]" (migrating to name) or "[<slot>-<-<name>]" (importing from name).
Status ParseOpenSlot(std::string_view field, NodeInfo* n) {
  size_t dash = field.find('-');
  if (field.size() < 2 || field.back() != ']' || dash == std::string_view::npos ||
      dash + 2 >= field.size() || field[dash + 2] != '-') {
    return Status::Corruption("bad migrating/importing entry \"" + std::string(field) + "\"");
  }
  auto slot = ParseBounded(field.substr(1, dash - 1), kClusterSlots - 1);
  std::string_view name = field.substr(dash + 3, field.size() - dash - 4);
  char direction = field[dash + 1];
  if (!slot || !ValidName(name) || (direction != '>' && direction != '<')) {
    return Status::Corruption("bad migrating/importing entry \"" + std::string(field) + "\"");
  }
  (direction == '>' ? n->migrating : n->importing)[*slot] = std::string(name);
  return Status::Ok();
}

Status ParseSlots(std::string_view field, NodeInfo* n) {
  if (!field.empty() && field.front() == '[') return ParseOpenSlot(field, n);
  size_t dash = field.find('-');
  auto first = ParseBounded(field.substr(0, dash), kClusterSlots - 1);
  auto last = dash == std::string_view::npos
                  ? first
                  : ParseBounded(field.substr(dash + 1), kClusterSlots - 1);
  if (!first || !last) return Status::Corruption("bad slot \"" + std::string(field) + "\"");
  if (*last < *first)
    return Status::Corruption("reversed slot range \"" + std::string(field) + "\"");
  for (int s = *first; s <= *last; s++) n->slots.set(s);
  return Status::Ok();
}

Result<NodeInfo> ParseNode(const std::vector<std::string>& f) {
  if (f.size() < 8) return Status::Corruption("a node line needs at least 8 fields");
  NodeInfo n;
  if (!ValidName(f[0])) return Status::Corruption("bad node name");
  n.name = f[0];
  KV_TRY(ParseAddress(f[1], &n));
  KV_TRY(ParseFlags(f[2], &n.flags));
  if (f[3] != "-") {
    if (!ValidName(f[3])) return Status::Corruption("bad primary name");
    n.primary = f[3];
  }
  auto ping = ParseInt64(f[4]);
  auto pong = ParseInt64(f[5]);
  auto epoch = ParseUint64(f[6]);
  if (!ping || !pong) return Status::Corruption("bad ping-sent or pong-received time");
  if (!epoch) return Status::Corruption("bad config epoch");
  n.ping_sent_ms = *ping;
  n.pong_received_ms = *pong;
  n.config_epoch = *epoch;
  if (f[7] != "connected" && f[7] != "disconnected") {
    return Status::Corruption("bad link state");
  }
  n.link_connected = f[7] == "connected";
  for (size_t j = 8; j < f.size(); j++) KV_TRY(ParseSlots(f[j], &n));
  return n;
}

Status ParseVars(const std::vector<std::string>& f, NodesFile* out) {
  if (f.size() % 2 == 0) return Status::Corruption("vars needs name/value pairs");
  for (size_t j = 1; j < f.size(); j += 2) {
    bool current = EqualsIgnoreCase(f[j], "currentEpoch");
    if (!current && !EqualsIgnoreCase(f[j], "lastVoteEpoch")) {
      LOG_WARNING("Skipping unknown cluster config variable '%s'", f[j].c_str());
      continue;
    }
    auto v = ParseUint64(f[j + 1]);
    if (!v) return Status::Corruption("bad value for " + f[j]);
    (current ? out->current_epoch : out->last_vote_epoch) = *v;
  }
  return Status::Ok();
}

void AppendOpenSlots(const NodeInfo& n, std::string* s) {
  auto mig = n.migrating.begin();
  auto imp = n.importing.begin();
  while (mig != n.migrating.end() || imp != n.importing.end()) {
    bool take_mig =
        imp == n.importing.end() || (mig != n.migrating.end() && mig->first <= imp->first);
    if (take_mig) {
      if (imp != n.importing.end() && imp->first == mig->first) ++imp;
      *s += " [" + std::to_string(mig->first) + "->-" + mig->second + "]";
      ++mig;
    } else {
      *s += " [" + std::to_string(imp->first) + "-<-" + imp->second + "]";
      ++imp;
    }
  }
}

}  // namespace

std::vector<std::pair<int, int>> SlotRanges(const SlotBitmap& slots) {
  std::vector<std::pair<int, int>> out;
  int s = 0;
  while (s < kClusterSlots) {
    if (!slots.test(s)) {
      s++;
      continue;
    }
    int first = s;
    while (s + 1 < kClusterSlots && slots.test(s + 1)) s++;
    out.emplace_back(first, s);
    s++;
  }
  return out;
}

std::string FlagsText(uint16_t flags) {
  std::string out;
  for (const auto& [bit, text] : kFlagNames) {
    if (!(flags & bit)) continue;
    if (!out.empty()) out += ',';
    out += text;
  }
  return out.empty() ? "noflags" : out;
}

std::string NodeLine(const NodeInfo& n, bool use_pport) {
  bool myself = n.flags & kFlagMyself;
  std::string s = n.name;
  s += ' ' + n.ip + ':' + std::to_string(use_pport && n.pport ? n.pport : n.port) + '@' +
       std::to_string(n.cport);
  if (!n.hostname.empty()) s += ',' + n.hostname;
  s += ' ' + FlagsText(n.flags) + ' ' + (n.primary.empty() ? "-" : n.primary);
  s += ' ' + std::to_string(n.ping_sent_ms) + ' ' + std::to_string(n.pong_received_ms) + ' ' +
       std::to_string(n.config_epoch);
  s += n.link_connected || myself ? " connected" : " disconnected";
  for (const auto& [first, last] : SlotRanges(n.slots)) {
    s += ' ' + std::to_string(first);
    if (last != first) s += '-' + std::to_string(last);
  }
  if (myself) AppendOpenSlots(n, &s);
  return s;
}

std::string FormatNodesFile(const NodesFile& f) {
  std::string out;
  for (const NodeInfo& n : f.nodes) {
    if (n.flags & kFlagHandshake) continue;
    out += NodeLine(n);
    out += '\n';
  }
  out += "vars currentEpoch " + std::to_string(f.current_epoch) + " lastVoteEpoch " +
         std::to_string(f.last_vote_epoch) + "\n";
  return out;
}

Result<NodesFile> ParseNodesFile(std::string_view text) {
  NodesFile out;
  std::set<std::string> names;
  int myself_line = 0;
  int lineno = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    lineno++;
    auto fields = SplitArgs(line);
    if (!fields) return LineError(lineno, line, "unbalanced quotes");
    if (fields->empty()) continue;  // Redis' own padding is newlines; hand edits add blanks
    if (EqualsIgnoreCase((*fields)[0], "vars")) {
      Status st = ParseVars(*fields, &out);
      if (!st.ok()) return LineError(lineno, line, st.message());
      continue;
    }
    auto node = ParseNode(*fields);
    if (!node.ok()) return LineError(lineno, line, node.status().message());
    if (!names.insert(node->name).second) return LineError(lineno, line, "node named twice");
    if (node->flags & kFlagMyself) {
      if (myself_line) {
        return LineError(
            lineno, line,
            "a second myself node (the first is on line " + std::to_string(myself_line) + ")");
      }
      myself_line = lineno;
    }
    out.nodes.push_back(std::move(*node));
  }
  if (!myself_line) return Status::Corruption(std::string(kCorrupt) + ": no node is myself");
  return out;
}

Result<std::optional<NodesFile>> LoadNodesFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<NodesFile>();
    return Status::FromErrno("Loading the cluster node config from " + path, errno);
  }
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Status::FromErrno("Loading the cluster node config from " + path, err);
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (text.empty()) return std::optional<NodesFile>();
  KV_TRY_ASSIGN(f, ParseNodesFile(text));
  return std::optional<NodesFile>(std::move(f));
}

Status WriteNodesFileAtomically(const std::string& path, const NodesFile& f, bool fsync) {
  return WriteNodesTextAtomically(path, FormatNodesFile(f), fsync);
}

Status WriteNodesTextAtomically(const std::string& path, const std::string& text, bool fsync) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno("open " + tmp, errno);
  // Any failure from here on removes the temporary file, so the old file stays the only one.
  auto fail = [&](const std::string& what, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return Status::FromErrno(what, err);
  };
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write " + tmp, errno);
    done += static_cast<size_t>(n);
  }
  if (fsync && ::fsync(fd) != 0) return fail("fsync " + tmp, errno);
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0) return fail("close " + tmp, errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename " + tmp, errno);

  // The rename is durable only once the directory entry is.
  if (!fsync) return Status::Ok();
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Status::FromErrno("open " + dir, errno);
  int synced = ::fsync(dfd);
  int err = errno;
  ::close(dfd);
  if (synced != 0) return Status::FromErrno("fsync " + dir, err);
  return Status::Ok();
}

}  // namespace kv::cluster
