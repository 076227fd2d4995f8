// Whole-slot migration's part in the slot map: the checks both ends make before a migration
// starts, and the two changes that end it (the target's claim, the source's hand-over). The
// migration itself (the data link, the snapshot, the stream) is the server's
// (server/slot_migration.*); docs/cluster.md describes it.
#include <algorithm>

#include "cluster/cluster.h"
#include "cluster/cluster_types.h"
#include "common/logging.h"

namespace kv::cluster {

std::string FormatSlotRanges(std::span<const SlotRange> ranges) {
  std::string out;
  for (const SlotRange& r : ranges) {
    if (!out.empty()) out += ' ';
    out += std::to_string(r.first) + "-" + std::to_string(r.last);
  }
  return out;
}

namespace {

// The first slot of `ranges` that `bad` says no to, or -1.
template <typename Pred>
int FirstSlotWhere(std::span<const SlotRange> ranges, Pred bad) {
  for (const SlotRange& r : ranges) {
    for (int s = r.first; s <= r.last; s++) {
      if (bad(s)) return s;
    }
  }
  return -1;
}

}  // namespace

bool Cluster::ServesSlot(int slot) const { return slots_[slot] == myself_; }

void Cluster::MarkExporting(std::span<const SlotRange> ranges, bool on) {
  for (const SlotRange& r : ranges) {
    std::fill(exporting_.begin() + r.first, exporting_.begin() + r.last + 1, on);
  }
}

void Cluster::SetMigrating(int slot, std::string_view target) {
  migrating_to_[slot] = target.empty() ? nullptr : Lookup(target);
}

Status Cluster::CheckExport(std::span<const SlotRange> ranges, std::string_view target,
                            std::string* ip, int* port) {
  if (myself_->is_replica()) return Status::Invalid("Only a primary can migrate slots");
  if (int s = FirstSlotWhere(ranges, [&](int s) { return slots_[s] != myself_; }); s >= 0) {
    return Status::Invalid("I'm not the owner of hash slot " + std::to_string(s));
  }
  if (int s = FirstSlotWhere(
          ranges, [&](int s) { return migrating_to_[s] != nullptr || importing_from_[s]; });
      s >= 0) {
    return Status::Invalid("Hash slot " + std::to_string(s) + " is already migrating or importing");
  }
  Node* n = Lookup(target);
  if (!n) return Status::Invalid("Unknown node " + std::string(target));
  if (n == myself_) return Status::Invalid("Can't migrate slots to myself");
  if (n->is_replica()) return Status::Invalid("Target node is not a master");
  if (n->failed() || n->timed_out() || n->in_handshake() || n->ip.empty() || n->port == 0) {
    return Status::Invalid("Target node " + n->name + " is not reachable");
  }
  *ip = n->ip;
  *port = n->port;
  return Status::Ok();
}

Status Cluster::CheckImport(std::span<const SlotRange> ranges, std::string_view source) {
  if (myself_->is_replica()) return Status::Invalid("Only a primary can import slots");
  Node* n = Lookup(source);
  if (!n) return Status::Invalid("Unknown node " + std::string(source));
  if (int s = FirstSlotWhere(ranges, [&](int s) { return slots_[s] != n; }); s >= 0) {
    return Status::Invalid("Hash slot " + std::to_string(s) + " is not served by " + n->name +
                           " in my view");
  }
  if (int s = FirstSlotWhere(
          ranges, [&](int s) { return migrating_to_[s] != nullptr || importing_from_[s]; });
      s >= 0) {
    return Status::Invalid("Hash slot " + std::to_string(s) + " is already migrating or importing");
  }
  return Status::Ok();
}

void Cluster::ClaimSlots(std::span<const SlotRange> ranges) {
  for (const SlotRange& r : ranges) {
    for (int s = r.first; s <= r.last; s++) {
      DelSlot(s);
      AddSlot(myself_, s);
      importing_from_[s] = nullptr;
    }
  }
  // A new epoch makes this node's claim win everywhere, as for a slot imported by hand.
  if (BumpEpochWithoutConsensus()) {
    LOG_WARNING("configEpoch updated after importing slots %s", FormatSlotRanges(ranges).c_str());
  }
  // On disk before anyone hears of it: a restart must not forget the claim.
  Todo(kTodoSaveConfig | kTodoFsyncConfig | kTodoUpdateState);
  AfterEvent();
  BroadcastPong(false);
}

void Cluster::HandOverSlots(std::span<const SlotRange> ranges, std::string_view target) {
  Node* n = Lookup(target);
  if (!n) return;  // forgotten meanwhile: the target's claim will reach us by gossip
  for (const SlotRange& r : ranges) {
    for (int s = r.first; s <= r.last; s++) {
      migrating_to_[s] = nullptr;
      if (slots_[s] == n) continue;  // its claim came first
      DelSlot(s);
      AddSlot(n, s);
    }
  }
  Todo(kTodoSaveConfig | kTodoFsyncConfig | kTodoUpdateState);
  AfterEvent();
}

}  // namespace kv::cluster
