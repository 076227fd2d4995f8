// Whole-slot migration between kvstore nodes (CLUSTER MIGRATESLOTS, in the form Valkey 9 gives
// it): the source moves one or more whole slots to another primary as a replication sync
// restricted to them, through the data link (the replication data plane: one-sided writes into
// the target's registered ring, with its credits and chunks; libfabric's verbs on RDMA NICs,
// its tcp and shm providers or plain sockets elsewhere). docs/cluster.md is the spec.
//
// The source (an export job, slot_export.cc) connects to the target's client port (the control
// connection: CLUSTER SYNCSLOTS ESTABLISH with the data link's setup, then STATUS and ABORT),
// and sends through the data link:
//   1. each slot's keys as RESTORE ... REPLACE ABSTTL commands, one slot at a time under the
//      keyspace lock (a slot is a consistent snapshot at the moment it is sent);
//   2. from the moment a slot is sent, every write to it, as this node's replicas get it (the
//      propagation feed's tap);
//   3. once the stream has caught up: writes paused, the end mark (CLUSTER SYNCSLOTS END).
// The target (an import job, slot_import.cc) applies what arrives as its own writes (its
// replicas and AOF get them), and at the end mark claims the slots under a new epoch and tells
// the cluster. The source, told by STATUS, hands the slots over in its own view, ends the
// pause and deletes the keys it no longer serves.
//
// A migration cut off midway (a node killed, the link or the control connection broken, a
// cancel) leaves every key with one owner: until the target claims the slots the source serves
// them with all their keys, and the target drops what it imported of slots it does not serve.
//
// Every member is used with the keyspace lock held, except where it says otherwise.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster.h"
#include "cmd/context.h"
#include "common/status.h"

namespace kv::transport {
class StreamReceiver;
}
namespace kv::repl {
class DataLinkSender;
class LinkIo;
}  // namespace kv::repl

namespace kv::server {

class Server;

class SlotMigrations {
 public:
  explicit SlotMigrations(Server& server);
  ~SlotMigrations();
  SlotMigrations(const SlotMigrations&) = delete;
  SlotMigrations& operator=(const SlotMigrations&) = delete;

  // Cancels every job and waits for their threads (no lock held: they take it).
  void Stop();
  // CLUSTER MIGRATESLOTS, GETSLOTMIGRATIONS, CANCELSLOTMIGRATIONS and SYNCSLOTS.
  void Command(cmd::Context& c);
  // A client went: when it was an import's control connection, the import is cancelled.
  void OnClientClosed(uint64_t id);
  // INFO slot_migration's lines.
  void Info(std::string* out);
  // DEBUG REPLICATION-BREAK-DATA-LINK: the running export's data link fails once `after` more
  // bytes are sent (0: now).
  void BreakDataLink(uint64_t after);
  // DEBUG SLOT-MIGRATION-HOLD: this node's exports stop at `step` ("streaming": the snapshot
  // sent, the stream flowing; "handover": writes paused, the end mark not sent; "claimed": the
  // target has claimed the slots, this node has not yet recorded it) until another step or
  // "none" is set; tests kill nodes there. False for an unknown step.
  bool Hold(std::string_view step);

 private:
  struct Job {
    std::string name;  // 40 hex characters
    bool exporting = false;
    std::vector<cluster::SlotRange> ranges;
    std::string source, target;  // node ids
    int64_t create_s = 0, update_s = 0;
    std::string state;  // queued, connecting, snapshot, streaming, handover, importing,
                        // success, failed, cancelled
    std::string message;
    std::atomic<bool> cancel{false};
    int slots_total = 0, slots_sent = 0;
    uint64_t keys = 0, bytes = 0;
    int64_t pause_us = -1;        // the hand-over's pause of writes (export)
    bool deleting = false;        // export: handed over, its copy here still being deleted
    std::string link;             // the data link, as it describes itself
    uint64_t control_client = 0;  // import: the source's control connection
    bool finished() const {
      return state == "success" || state == "failed" || state == "cancelled";
    }
  };

  // slot_migration.cc
  void MigrateSlots(cmd::Context& c);
  void SyncSlots(cmd::Context& c);
  void ReplyJobs(cmd::Context& c);
  void SetState(Job& j, std::string state, std::string message = "");
  // Starts the next queued export when none runs.
  void StartNextExport();
  // Keeps the finished jobs to the last kKeepFinished.
  void TrimLog();
  // Joins the threads of jobs that ended (lock held: they end after releasing it).
  void ReapThreads();

  // slot_export.cc (the job's thread, no lock held unless it says so)
  void RunExport(Job* j);
  std::string Export(Job* j);
  // A target without whole-slot migration (redis-server): the keys move as redis-cli
  // --cluster reshard moves them (SETSLOT IMPORTING/MIGRATING, RESTORE-ASKING in batches, the
  // round trip under the keyspace lock as MIGRATE's, SETSLOT NODE), a slot at a time.
  std::string ExportByMigrate(Job* j, repl::LinkIo& io, const std::string& myid);
  // Appends slot `slot`'s keys as RESTORE commands (lock held); returns how many.
  uint64_t DumpSlot(int slot, std::string* out);
  // The feed's tap: writes to the slots already sent go down the data link (lock held).
  void InstallTap(Job* j, repl::DataLinkSender* link);
  void RemoveTap();

  // slot_import.cc
  // CLUSTER SYNCSLOTS ESTABLISH on the target: the checks, the receiver, the thread.
  void Establish(cmd::Context& c);
  void RunImport(Job* j, std::unique_ptr<transport::StreamReceiver> rx, std::string peer);
  std::string Import(Job* j, transport::StreamReceiver& rx, const std::string& peer);
  // At the end mark: waits (letting `lock` go) until this node's online replicas have
  // acknowledged the stream up to `offset`, the import's last write, so that a target that dies
  // right after its claim leaves the slots' keys to the replica that takes over (the source
  // deletes its copy once it learns of the claim). "" then, else why not.
  std::string AwaitReplicas(Job* j, int64_t offset, std::unique_lock<std::timed_mutex>& lock);
  // An import that did not end with the claim: the keys it brought of slots this node does
  // not serve are deleted (lock held).
  void DropImported(Job* j);

  static constexpr size_t kKeepFinished = 16;

  Server& server_;
  std::deque<std::shared_ptr<Job>> jobs_;  // oldest first
  struct Runner {
    std::shared_ptr<Job> job;
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;  // the thread no longer needs the lock
  };
  // Runs fn on a thread of the job's; ReapThreads and Stop join it.
  template <typename Fn>
  void Spawn(std::shared_ptr<Job> job, Fn fn) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread t([fn = std::move(fn), done]() mutable {
      fn();
      done->store(true);
    });
    runners_.push_back({std::move(job), std::move(t), std::move(done)});
  }
  std::vector<Runner> runners_;
  Job* exporting_ = nullptr;  // the export whose thread runs
  repl::DataLinkSender* export_link_ = nullptr;  // its data link, once started
  Job* importing_ = nullptr;  // the import whose thread runs
  // The tap (export): slots of the running export, and of them those already sent.
  std::vector<bool> tap_slots_, tap_sent_;
  bool tap_flushed_ = false;  // FLUSHALL or FLUSHDB ran meanwhile: the export fails
  enum HoldStep { kHoldNone, kHoldStreaming, kHoldHandover, kHoldClaimed };
  std::atomic<int> hold_{kHoldNone};  // DEBUG SLOT-MIGRATION-HOLD (read by the export thread)
};

}  // namespace kv::server
