#include "acl/check.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/glob.h"
#include "common/strutil.h"

namespace kv::acl {
namespace {

// The permissions a key needs, from its key-spec flags (Redis: access reads; insert, delete
// and update write). RO/RW/OW/RM alone demand nothing.
uint8_t NeededPerms(uint32_t key_flags) {
  uint8_t perms = 0;
  if (key_flags & cmd::kKeyAccess) perms |= kKeyRead;
  if (key_flags & (cmd::kKeyInsert | cmd::kKeyDelete | cmd::kKeyUpdate)) perms |= kKeyWrite;
  return perms;
}

bool SelectorAllowsKey(const Selector& s, std::string_view key, uint8_t perms) {
  if (s.allkeys) return true;
  for (const KeyPattern& k : s.keys) {
    if ((k.perms & perms) != perms) continue;
    if (GlobMatch(k.pattern, key)) return true;
  }
  return false;
}

bool ChannelInList(const std::vector<std::string>& list, std::string_view channel,
                   bool is_pattern) {
  for (const std::string& p : list) {
    if (is_pattern ? p == channel : GlobMatch(p, channel)) return true;
  }
  return false;
}

// The channel arguments of the pub/sub commands ACL checks (Redis' commands_with_channels,
// publishing and subscribing only: the unsubscribe commands are never refused).
struct ChannelArgs {
  int first = 1;
  int count = -1;  // -1: every argument from `first`
  bool pattern = false;
};

std::optional<ChannelArgs> ChannelArgsOf(const cmd::CommandSpec& spec) {
  const std::string& n = spec.name;
  if (n == "subscribe" || n == "ssubscribe") return ChannelArgs{1, -1, false};
  if (n == "psubscribe") return ChannelArgs{1, -1, true};
  if (n == "publish" || n == "spublish") return ChannelArgs{1, 1, false};
  return std::nullopt;
}

// Redis' doesCommandHaveKeys: a key finder, or a key spec that names real keys (shard
// channels are declared as not_key specs). A command without key specs falls back on its
// legacy key range.
bool HasKeys(const cmd::CommandSpec& spec) {
  if (spec.getkeys) return true;
  if (spec.key_specs.empty()) return spec.HasKeys();
  for (const cmd::KeySpec& ks : spec.key_specs) {
    if (!(ks.flags & cmd::kKeyNotKey)) return true;
  }
  return false;
}

bool CommandAllowed(const Selector& s, const cmd::CommandSpec& spec,
                    std::span<const std::string_view> args) {
  if (s.allcommands || (spec.flags & cmd::kNoAuth) || s.CommandBit(spec.id)) return true;
  auto it = s.firstargs.find(spec.id);
  if (args.size() < 2 || it == s.firstargs.end()) return false;
  // First arguments are only recorded for commands without subcommands (never a subcommand),
  // so the argument is always args[1].
  size_t idx = spec.parent ? 2 : 1;
  if (idx >= args.size()) return false;
  for (const std::string& a : it->second) {
    if (EqualsIgnoreCase(a, args[idx])) return true;
  }
  return false;
}

// Computed once per check, shared by the selectors, into the thread's buffer: a check
// allocates nothing once it has grown (a check never runs inside another).
struct KeyCache {
  bool ready = false;
  std::vector<cmd::KeyRef>& keys = Buffer();
  static std::vector<cmd::KeyRef>& Buffer() {
    thread_local std::vector<cmd::KeyRef> buffer;
    return buffer;
  }
};

CheckResult CheckSelector(const Selector& s, const cmd::CommandSpec& spec,
                          std::span<const std::string_view> args, KeyCache& cache) {
  if (!CommandAllowed(s, spec, args)) return {Denial::kCommand, 0};
  if (!s.allkeys && HasKeys(spec)) {
    if (!cache.ready) {
      cmd::KeysAndFlagsInto(spec, args, &cache.keys);
      cache.ready = true;
    }
    for (const cmd::KeyRef& k : cache.keys) {
      if (!SelectorAllowsKey(s, args[k.index], NeededPerms(k.flags))) {
        return {Denial::kKey, k.index};
      }
    }
  }
  if (!s.allchannels && (spec.flags & cmd::kPubSub)) {
    if (auto ch = ChannelArgsOf(spec)) {
      int argc = static_cast<int>(args.size());
      int stop = ch->count < 0 ? argc : std::min(argc, ch->first + ch->count);
      for (int i = ch->first; i < stop; i++) {
        if (!ChannelInList(s.channels, args[i], ch->pattern)) return {Denial::kChannel, i};
      }
    }
  }
  return {};
}

}  // namespace

CheckResult CheckCommand(const User& u, const cmd::CommandSpec& spec,
                         std::span<const std::string_view> args) {
  CheckResult relevant{Denial::kCommand, 0};
  KeyCache cache;
  for (const Selector& s : u.selectors) {
    CheckResult r = CheckSelector(s, spec, args, cache);
    if (r.allowed()) return r;
    if (r.denial > relevant.denial || (r.denial == relevant.denial && r.arg > relevant.arg)) {
      relevant = r;
    }
  }
  return relevant;
}

bool RunsWithUnrestrictedKeys(const User& u, const cmd::CommandSpec& spec,
                              std::span<const std::string_view> args, uint8_t perms) {
  KeyCache cache;
  for (const Selector& s : u.selectors) {
    if (!CheckSelector(s, spec, args, cache).allowed()) continue;
    if (s.allkeys) return true;
    for (const KeyPattern& k : s.keys) {
      if ((k.perms & perms) == perms && k.pattern == "*") return true;
    }
  }
  return false;
}

bool CheckKey(const User& u, std::string_view key, uint8_t perms) {
  for (const Selector& s : u.selectors) {
    if (SelectorAllowsKey(s, key, perms)) return true;
  }
  return false;
}

bool CheckChannel(const User& u, std::string_view channel, bool is_pattern) {
  for (const Selector& s : u.selectors) {
    if (s.allchannels || ChannelInList(s.channels, channel, is_pattern)) return true;
  }
  return false;
}

}  // namespace kv::acl
