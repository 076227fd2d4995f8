#include "server/config/config.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/histogram.h"
#include "common/strutil.h"
#include "server/client_eviction.h"
#include "server/proc_title.h"
#include "server/process_params.h"

namespace kv::server {

namespace {
std::string Join(const std::vector<std::string>& v) {
  std::string r;
  for (size_t i = 0; i < v.size(); i++) {
    if (i) r += ' ';
    r += v[i];
  }
  return r;
}

// client-output-buffer-limit: "<class> <hard> <soft> <seconds>" groups, merged by class.
Result<std::string> MergeOutputLimits(const std::string& current,
                                      const std::vector<std::string>& args) {
  std::vector<std::string> words = args;
  if (words.size() == 1) words = SplitArgs(words[0]).value_or(std::vector<std::string>{});
  if (words.empty() || words.size() % 4 != 0)
    return Status::Invalid("Wrong number of arguments in buffer limit configuration.");
  auto cur = SplitArgs(current).value_or(std::vector<std::string>{});
  std::map<std::string, std::vector<std::string>> by_class;
  std::vector<std::string> order = {"normal", "slave", "pubsub"};
  for (size_t i = 0; i + 3 < cur.size(); i += 4)
    by_class[cur[i]] = {cur[i + 1], cur[i + 2], cur[i + 3]};
  for (size_t i = 0; i < words.size(); i += 4) {
    std::string cls = ToLower(words[i]);
    if (cls == "replica") cls = "slave";
    if (cls != "normal" && cls != "slave" && cls != "pubsub")
      return Status::Invalid("Invalid client class specified in buffer limit configuration.");
    auto hard = ParseMemory(words[i + 1]);
    auto soft = ParseMemory(words[i + 2]);
    auto secs = ParseInt64(words[i + 3]);
    if (!hard || !soft || !secs || *hard < 0 || *soft < 0 || *secs < 0)
      return Status::Invalid(
          "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    by_class[cls] = {std::to_string(*hard), std::to_string(*soft), std::to_string(*secs)};
  }
  std::vector<std::string> out;
  for (const auto& c : order) {
    out.push_back(c);
    for (const auto& v : by_class[c]) out.push_back(v);
  }
  return Join(out);
}
// An octal permission (unixsocketperm 700): digits 0-7, at most `max`; canonical without
// leading zeros ("0" for none).
Result<std::string> CanonicalOctal(const std::string& v, int64_t max) {
  if (v.empty() || v.size() > 8 || v.find_first_not_of("01234567") != std::string::npos) {
    return Status::Invalid("argument must be an octal number");
  }
  int64_t n = std::stoll(v, nullptr, 8);
  if (n > max) return Status::Invalid("argument must be between 0 and 777 inclusive (octal)");
  char buf[16];
  snprintf(buf, sizeof buf, "%llo", static_cast<long long>(n));
  return std::string(buf);
}

// notify-keyspace-events: the classes as Redis writes them back ("KA" is "AK"; "A" stands for
// g$lshzxetd; K, E and m come last). Redis' text drops an 'n' beside 'A' while still sending
// new-key events until a restart; kvstore keeps it ("AnK") so that the setting does what was set.
Result<std::string> CanonicalNotifyEvents(const std::string& v) {
  constexpr std::string_view kClasses = "g$lshzxetd";  // what 'A' stands for, in Redis' order
  std::string has;
  for (char c : v) {
    if (c == 'A') {
      has += kClasses;
    } else if (std::string_view("g$lshzxetdnKEm").find(c) != std::string_view::npos) {
      has += c;
    } else {
      return Status::Invalid("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
    }
  }
  auto set = [&](char c) { return has.find(c) != std::string::npos; };
  std::string out;
  bool all = true;
  for (char c : kClasses) all = all && set(c);
  if (all) {
    out = "A";
  } else {
    for (char c : kClasses) {
      if (set(c)) out += c;
    }
  }
  for (char c : std::string_view("nKEm")) {
    if (set(c)) out += c;
  }
  return out;
}

// replicaof: "<host> <port>" as redis.conf and --replicaof write it (or one argument holding
// both), "no one" or nothing for none. The canonical value is "host port" or "".
Result<std::string> CanonicalReplicaOf(const std::vector<std::string>& args) {
  std::vector<std::string> words = args;
  if (words.size() == 1) words = SplitArgs(words[0]).value_or(std::vector<std::string>{});
  if (words.empty()) return std::string();
  if (words.size() != 2) return Status::Invalid("wrong number of arguments");
  if (EqualsIgnoreCase(words[0], "no") && EqualsIgnoreCase(words[1], "one")) return std::string();
  auto port = ParseInt64(words[1]);
  if (!port || *port < 0 || *port > 65535) return Status::Invalid("Invalid master port");
  return words[0] + " " + std::to_string(*port);
}

// latency-tracking-info-percentiles: each word a number (Redis' string2d) from 0 to 100,
// canonical as Redis shows it ("%f" without trailing zeros: 99.900000 is 99.9).
Result<std::string> CanonicalPercentiles(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  if (args.size() == 1 && args[0].empty()) return std::string();  // `""`: no percentiles
  for (const std::string& a : args) {
    auto p = ParseDouble(a);
    if (!p) return Status::Invalid("Invalid latency-tracking-info-percentiles parameters");
    if (*p > 100.0 || *p < 0.0) {
      return Status::Invalid(
          "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
    }
    out.push_back(PercentileToString(*p));
  }
  return Join(out);
}
}  // namespace

Config::Config() {
  for (auto& spec : DefaultParams()) {
    std::string name = spec.name;
    if (!spec.alias.empty()) aliases_[spec.alias] = name;
    Param p{spec, spec.default_value, nullptr};
    params_.emplace(name, std::move(p));
  }
}

Config::Param* Config::Find(const std::string& name) {
  std::string n = ToLower(name);
  auto a = aliases_.find(n);
  if (a != aliases_.end()) n = a->second;
  auto it = params_.find(n);
  return it == params_.end() ? nullptr : &it->second;
}

const Config::Param* Config::Find(const std::string& name) const {
  return const_cast<Config*>(this)->Find(name);
}

Result<std::string> Config::Canonical(const Param& p, const std::vector<std::string>& args) const {
  const ParamSpec& s = p.spec;
  if (s.type == ParamType::kMultiArg) {
    if (s.name == "client-output-buffer-limit") return MergeOutputLimits(p.value, args);
    if (s.name == "replicaof") return CanonicalReplicaOf(args);
    if (s.name == "latency-tracking-info-percentiles") return CanonicalPercentiles(args);
    if (s.name == "oom-score-adj-values") return CanonicalOomScoreAdjValues(Join(args));
    if (s.name == "shutdown-on-sigint" || s.name == "shutdown-on-sigterm") {
      return CanonicalShutdownFlags(Join(args));
    }
    return Join(args);
  }
  if (args.size() != 1) return Status::Invalid("wrong number of arguments");
  const std::string& v = args[0];
  switch (s.type) {
    case ParamType::kBool: {
      std::string l = ToLower(v);
      if (l != "yes" && l != "no") return Status::Invalid("argument must be 'yes' or 'no'");
      return l;
    }
    case ParamType::kInt:
    case ParamType::kMemory: {
      if (s.name == "unixsocketperm") return CanonicalOctal(v, s.max);
      if (s.name == "maxmemory-clients") {
        // Bytes, or a percentage of maxmemory ("10%"), shown back as it was given.
        int64_t n = 0;
        std::string error;
        if (!ParseMaxmemoryClients(v, &n, &error)) return Status::Invalid(error);
        return n < 0 ? std::to_string(-n) + "%" : std::to_string(n);
      }
      auto n = s.type == ParamType::kInt ? ParseInt64(v) : ParseMemory(v);
      if (!n) {
        return Status::Invalid(s.type == ParamType::kInt
                                   ? "argument couldn't be parsed into an integer"
                                   : "argument must be a memory value");
      }
      if (*n < s.min || *n > s.max) {
        return Status::Invalid("argument must be between " + std::to_string(s.min) + " and " +
                               std::to_string(s.max) + " inclusive");
      }
      return std::to_string(*n);
    }
    case ParamType::kEnum: {
      std::string l = ToLower(v);
      for (const auto& e : s.enum_values) {
        if (e == l) return l;
      }
      std::string opts;
      for (size_t i = 0; i < s.enum_values.size(); i++) opts += (i ? ", " : "") + s.enum_values[i];
      return Status::Invalid("argument(s) must be one of the following: " + opts);
    }
    default:
      if (s.name == "notify-keyspace-events") return CanonicalNotifyEvents(v);
      if (s.name == "proc-title-template") {
        auto t = ProcTitle(*this, v, "");
        if (!t.ok()) return t.status();
      }
      return v;
  }
}

Status Config::SetOne(Param& p, const std::vector<std::string>& args, bool startup) {
  auto canon = Canonical(p, args);
  if (!canon.ok()) return canon.status();
  // A feature kvstore lacks is refused, not accepted and ignored (config_support.cc).
  if (p.spec.refused && *canon != p.spec.default_value) return Status::Invalid(*p.spec.refused);
  std::string old = p.value;
  p.value = *canon;
  if (p.apply && !startup) {
    Status s = p.apply(p.value);
    if (!s.ok()) {
      p.value = old;
      return s;
    }
  }
  return Status::Ok();
}

Status Config::DirectiveError(const ConfigDirective& d, const std::string& why) {
  std::string line = d.line;
  if (line.empty()) {
    line = d.name;
    for (const auto& a : d.args) line += " " + a;
  }
  return Status::Invalid("*** FATAL CONFIG FILE ERROR ***\nReading the configuration file, at " +
                         (d.lineno > 0 ? "line " + std::to_string(d.lineno) : d.origin) +
                         "\n>>> '" + line + "'\n" + why);
}

Status Config::Load(const std::vector<ConfigDirective>& directives) {
  std::set<std::string> seen_multi;
  for (const auto& d : directives) {
    auto fail = [&](const std::string& why) { return DirectiveError(d, why); };
    if (d.name == "rename-command") {
      if (d.args.size() != 2) return fail("wrong number of arguments");
      renames_.emplace_back(d.args[0], d.args[1]);
      continue;
    }
    if (d.name == "user") {
      if (d.args.empty()) return fail("Bad directive or wrong number of arguments");
      users_.push_back(d);
      continue;
    }
    Param* p = Find(d.name);
    if (!p) return fail("Bad directive or wrong number of arguments");
    std::vector<std::string> args = d.args;
    // Repeated "save" lines accumulate, as in redis.conf; `save ""` clears.
    if (p->spec.name == "save") {
      if (seen_multi.count("save") && !p->value.empty() && !(args.size() == 1 && args[0].empty())) {
        args.insert(args.begin(), p->value);
      }
      seen_multi.insert("save");
      if (args.size() == 1 && args[0].empty()) args.clear();
    }
    Status s = SetOne(*p, args, /*startup=*/true);
    if (!s.ok()) return fail(s.message());
  }
  return Status::Ok();
}

Status Config::SetMany(const std::vector<std::pair<std::string, std::string>>& pairs, bool local) {
  auto failed = [](const std::string& name, const std::string& why) {
    return Status::Invalid("CONFIG SET failed (possibly related to argument '" + name + "') - " +
                           why);
  };
  std::set<std::string> names;
  for (const auto& [name, value] : pairs) {
    Param* p = Find(name);
    if (!p)
      return Status::Invalid("Unknown option or number of arguments for CONFIG SET - '" + name +
                             "'");
    if (p->spec.immutable) return failed(name, "can't set immutable config");
    if (p->spec.protected_config && !Allows("enable-protected-configs", local))
      return failed(name, "can't set protected config");
    if (!names.insert(p->spec.name).second) return failed(name, "duplicate parameter");
  }
  // A CONFIG SET value is one argument; multi-word parameters ("save 900 1") split it.
  auto args_of = [](const Param& p, const std::string& value) {
    if (p.spec.type == ParamType::kMultiArg && p.spec.name != "client-output-buffer-limit") {
      return SplitArgs(value).value_or(std::vector<std::string>{value});
    }
    return std::vector<std::string>{value};
  };
  // Validate everything first, then apply in order, rolling back on an apply failure.
  for (const auto& [name, value] : pairs) {
    Param* p = Find(name);
    auto canon = Canonical(*p, args_of(*p, value));
    if (!canon.ok()) return failed(name, canon.status().message());
  }
  std::vector<std::pair<Param*, std::string>> old;
  std::vector<std::pair<int, std::string>> groups;  // group, the first parameter set of it
  auto undo = [&] {
    for (auto it = old.rbegin(); it != old.rend(); ++it) {
      it->first->value = it->second;
      if (it->first->apply) it->first->apply(it->second);
    }
  };
  for (const auto& [name, value] : pairs) {
    Param* p = Find(name);
    std::vector<std::string> args = args_of(*p, value);
    std::string before = p->value;
    Status s = SetOne(*p, args, /*startup=*/false);
    if (!s.ok()) {
      undo();
      return failed(name, s.message());
    }
    old.emplace_back(p, before);
    if (p->group >= 0 && std::none_of(groups.begin(), groups.end(),
                                      [&](const auto& g) { return g.first == p->group; })) {
      groups.emplace_back(p->group, name);
    }
  }
  for (size_t i = 0; i < groups.size(); i++) {
    Status s = groups_[groups[i].first]();
    if (!s.ok()) {
      undo();
      for (size_t j = 0; j < i; j++) (void)groups_[groups[j].first]();  // back to the old values
      return failed(groups[i].second, s.message());
    }
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> Config::Get(
    const std::vector<std::string>& patterns) const {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> added;
  auto add = [&](const std::string& shown, const Param& p) {
    if (added.insert(shown).second) out.emplace_back(shown, p.value);
  };
  for (const auto& pat : patterns) {
    // Hidden parameters (Redis' testing knobs) answer their exact name, never a pattern.
    bool pattern = pat.find_first_of("*?[") != std::string::npos;
    for (const auto& [name, p] : params_) {
      if (p.spec.hidden && pattern) continue;
      if (GlobMatch(pat, name, true)) add(name, p);
    }
    for (const auto& [alias, name] : aliases_) {
      if (GlobMatch(pat, alias, true)) add(alias, params_.at(name));
    }
  }
  return out;
}

std::string Config::GetString(const std::string& name) const { return Find(name)->value; }
int64_t Config::GetInt(const std::string& name) const {
  return ParseInt64(Find(name)->value).value_or(0);
}
bool Config::GetBool(const std::string& name) const { return Find(name)->value == "yes"; }

void Config::OnApply(const std::string& name, ApplyFn fn) { Find(name)->apply = std::move(fn); }

void Config::OnApplyGroup(const std::vector<std::string>& names, std::function<Status()> fn) {
  for (const std::string& n : names) Find(n)->group = static_cast<int>(groups_.size());
  groups_.push_back(std::move(fn));
}

Status Config::ApplyAll() {
  for (auto& [name, p] : params_) {
    if (!p.apply) continue;
    Status s = p.apply(p.value);
    if (!s.ok()) return Status::Invalid("config '" + name + "': " + s.message());
  }
  for (auto& g : groups_) KV_TRY(g());
  return Status::Ok();
}

namespace {

// A size as CONFIG REWRITE writes it: in the largest of gb, mb and kb that divides it, as Redis
// does, so that `maxmemory 100mb` stays readable; a percentage (maxmemory-clients) as it is.
std::string FormatMemory(const std::string& value) {
  auto bytes = ParseInt64(value);
  if (!bytes || *bytes == 0) return value;
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {int64_t{1} << 30, "gb"}, {int64_t{1} << 20, "mb"}, {int64_t{1} << 10, "kb"}};
  for (const auto& [size, unit] : kUnits) {
    if (*bytes % size == 0) return std::to_string(*bytes / size) + unit;
  }
  return value;
}

}  // namespace

Status Config::Rewrite(const std::string& path, bool force_all) const {
  std::ifstream in(path);
  if (!in) return Status::IoError("Rewriting config file: " + path + " cannot be read");
  std::vector<std::string> lines;
  std::set<std::string> written;
  std::string line;
  bool no_replicaof = GetString("replicaof").empty() || GetBool("cluster-enabled");
  auto format = [](const Param& p) {
    if (p.spec.name == "save" || p.spec.type == ParamType::kMultiArg) {
      if (p.value.empty()) return p.spec.name + " \"\"";
      return p.spec.name + " " + p.value;
    }
    std::string v = p.value;
    if (p.spec.type == ParamType::kMemory) v = FormatMemory(v);
    if (v.empty() || v.find_first_of(" \"'") != std::string::npos) v = QuoteString(v);
    return p.spec.name + " " + v;
  };
  // `user` lines: the users as they are now take the place of the file's, in order; lines left
  // over go, users left over go at the end (Redis' rewriteConfigUserOption).
  std::vector<std::string> users = user_lines_ ? user_lines_() : std::vector<std::string>{};
  size_t users_written = 0;
  while (std::getline(in, line)) {
    auto args = SplitArgs(line);
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || !args || args->empty()) {
      lines.push_back(line);
      continue;
    }
    if (user_lines_ && EqualsIgnoreCase((*args)[0], "user")) {
      if (users_written < users.size()) lines.push_back(users[users_written++]);
      continue;
    }
    const Param* p = Find((*args)[0]);
    if (!p) {
      lines.push_back(line);
      continue;
    }
    // One line per parameter: the first occurrence carries the current value. Without a
    // primary the replicaof line goes, as Redis removes it (`replicaof ""` is no directive);
    // so does it in cluster mode, where nodes.conf says whom a node replicates.
    if (written.insert(p->spec.name).second && !(p->spec.name == "replicaof" && no_replicaof)) {
      lines.push_back(format(*p));
    }
  }
  bool header = false;
  for (const auto& [name, p] : params_) {
    if (written.count(name) || (!force_all && p.value == p.spec.default_value)) continue;
    if (name == "replicaof" && no_replicaof) continue;  // no directive says "no primary"
    if (!header) {
      lines.push_back("# Generated by CONFIG REWRITE");
      header = true;
    }
    lines.push_back(format(p));
  }
  for (; users_written < users.size(); users_written++) {
    if (!header) {
      lines.push_back("# Generated by CONFIG REWRITE");
      header = true;
    }
    lines.push_back(users[users_written]);
  }
  std::string tmp = path + ".tmp-rewrite";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::IoError("Rewriting config file: cannot write " + tmp);
    for (const auto& l : lines) out << l << "\n";
    out.flush();
    if (!out) return Status::IoError("Rewriting config file: write failed");
  }
  if (rename(tmp.c_str(), path.c_str()) != 0)
    return Status::FromErrno("Rewriting config file", errno);
  return Status::Ok();
}

}  // namespace kv::server
