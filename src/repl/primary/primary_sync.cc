// The primary's full resyncs: one forked child per batch of waiting replicas serializes the
// dataset straight to their sockets (diskless, $EOF: framing), into a file it then sends
// ($<len>), or into a shared ring per data-link replica (repl/datalink/snapshot_ring.h), from which
// the data link's thread writes it to the replica; +FULLRESYNC and the end of the child are handled
// here too.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "common/version.h"
#include "persist/snapshot.h"
#include "repl/datalink/data_link.h"
#include "repl/datalink/link_io.h"
#include "repl/datalink/snapshot_sinks.h"
#include "repl/primary/primary.h"

namespace kv::repl {
namespace {

// The shared ring between the snapshot child and a data link: room for the link's chunks in
// flight and what the replica has yet to acknowledge, with slack for the child to run ahead.
constexpr size_t kSnapshotRingBytes = 32 << 20;

}  // namespace

std::unique_ptr<Primary::ChildReport> Primary::ChildReport::Create(std::vector<uint64_t> targets) {
  size_t size = targets.size() + 1;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;  // zero-filled otherwise
  return std::unique_ptr<ChildReport>(
      new ChildReport(std::move(targets), static_cast<uint8_t*>(p), size));
}

Primary::ChildReport::~ChildReport() { munmap(bytes_, size_); }

bool Primary::ChildReport::Delivered(uint64_t id, bool gets_file) const {
  for (size_t i = 0; i < targets_.size(); i++) {
    if (targets_[i] == id) return bytes_[1 + i] == 1;
  }
  return gets_file && bytes_[0] == 1;
}

void Primary::StartSnapshot(int64_t now_ms) {
  std::vector<AttachedReplica*> batch;
  int64_t delay_ms = host_.ConfigInt("repl-diskless-sync-delay") * 1000;
  int64_t oldest = INT64_MAX;
  // One snapshot serves the replicas that want the same contents (the first waiting one's).
  const SnapshotFilter* filter = nullptr;
  for (auto& r : replicas_) {
    if (r->state != State::kWaitSnapshot) continue;
    if (!filter) filter = &r->filter;
    if (!(r->filter == *filter)) continue;
    batch.push_back(r.get());
    oldest = std::min(oldest, r->since_ms);
  }
  int64_t max_replicas = host_.ConfigInt("repl-diskless-sync-max-replicas");
  bool enough = max_replicas > 0 && static_cast<int64_t>(batch.size()) >= max_replicas;
  // A filtered snapshot goes to the sockets whatever repl-diskless-sync says (it must not
  // replace the snapshot file), as in Redis, when every replica of the batch takes $EOF:.
  bool filtered = batch.empty() || !(batch[0]->filter.keys && batch[0]->filter.functions);
  bool disk = !host_.ConfigBool("repl-diskless-sync") && !filtered;
  for (AttachedReplica* r : batch) disk = disk || !r->capa_eof;
  // Disk-based syncs start at once; diskless ones wait for more replicas to share the transfer.
  if (batch.empty() || (!disk && !enough && now_ms - oldest < delay_ms)) return;
  // One child at a time: a BGSAVE's or an AOF rewrite's is waited for, as in Redis.
  if (host_.OtherChildRunning()) return;
  child_filter_ = *filter;
  int64_t offset = feed_.offset();
  // The stream restarts with a SELECT for whoever joins now.
  feed_.ForgetSelectedDb();
  std::vector<int> fds;
  std::vector<uint64_t> fd_ids;  // their clients
  // Data-link replicas and their rings (the child fills them all at once).
  std::vector<std::pair<AttachedReplica*, std::unique_ptr<SnapshotRing>>> rings;
  std::string reply = "+FULLRESYNC " + replid_ + " " + std::to_string(offset) + "\r\n";
  std::vector<net::Fd> relay_ends;  // the child's ends of the TLS replicas' pipes
  for (AttachedReplica* r : batch) {
    if (r->client->tls()) {
      // Through the connection's TLS session, in order with what follows.
      if (!r->pre_psync) r->client->Send(reply);
    } else if (PollingSink sink(r->client->fd(), 1000);
               !r->pre_psync && !sink.Write(reply.data(), reply.size()).ok()) {
      r->client->RequestClose();
      continue;
    }
    if (r->data && disk) {
      // The data link's thread sends the saved file from its mapping once the child is done.
      r->data->ExpectSnapshotFile();
      continue;
    }
    if (r->data) {
      // The child writes the RDB into a ring; the data link's thread sends it on from there.
      auto ring = SnapshotRing::Create(kSnapshotRingBytes);
      if (!ring.ok()) {
        LOG_WARNING("Can't set up the snapshot for a replica's data link: %s",
                    ring.status().message().c_str());
        r->client->RequestClose();
        continue;
      }
      rings.emplace_back(r, std::move(*ring));
      continue;
    }
    if (r->client->tls()) {
      // The child writes into a pipe; the connection's loop sends it on through TLS.
      int p[2];
      if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        LOG_WARNING("Can't set up the snapshot for a TLS replica: pipe: %s", strerror(errno));
        r->client->RequestClose();
        continue;
      }
      (void)fcntl(p[1], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups; the default works too
      r->client->RelayFrom(net::Fd(p[0]));
      relay_ends.emplace_back(p[1]);
      fds.push_back(p[1]);
    } else {
      fds.push_back(r->client->fd());
    }
    fd_ids.push_back(r->client->id());
    // The stream from the snapshot's offset on waits in the shared buffer until it is sent.
    r->pin = feed_.backlog()->CursorAt(offset);
  }
  std::vector<uint64_t> targets;
  for (auto& [r, ring] : rings) targets.push_back(r->client->id());
  targets.insert(targets.end(), fd_ids.begin(), fd_ids.end());
  auto report = ChildReport::Create(std::move(targets));
  persist::ChildInfo& info = host_.child_info();
  // Without its pipe the child runs unreported.
  (void)info.Prepare(persist::ChildInfo::Kind::kRdb, host_.keyspace().TotalKeys());
  pid_t pid = fork();
  if (pid < 0) {
    LOG_WARNING("Can't start the replication snapshot: fork: %s", strerror(errno));
    info.EndChild();
    for (AttachedReplica* r : batch) {
      r->client->RequestClose();
      r->state = State::kSendingSnapshot;  // closing: no second +FULLRESYNC for it meanwhile
    }
    return;
  }
  if (pid == 0) {
    // A replication snapshot has no use once the primary is gone.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    info.EnterChild();
    host_.PrepareSnapshotChild(disk);
    std::vector<SnapshotRing*> child_rings;
    for (auto& [r, ring] : rings) child_rings.push_back(ring.get());
    RunChild(fds, child_rings, offset, disk, report ? report->bytes() : nullptr);
  }
  info.EnterParent();
  relay_ends.clear();  // the child has them: the pipes end when it does
  child_report_ = std::move(report);
  for (auto& [r, ring] : rings) r->data->SetSnapshotRing(std::move(ring));
  child_pid_ = pid;
  host_.WatchSnapshotChild(pid);
  fail_snapshot_after_ = -1;  // the child took it
  child_file_.clear();
  if (disk) {
    char cwd[4096];
    std::string name = host_.ConfigString("dbfilename");
    child_file_ = getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) + "/" + name : name;
    // Remembered only while the setting is on, as in Redis: turned on later, it deletes no
    // file a user's save made.
    if (host_.ConfigBool("rdb-del-sync-files")) sync_file_to_delete_ = child_file_;
  }
  for (AttachedReplica* r : batch) r->state = State::kSendingSnapshot;
  LOG_NOTICE("Starting BGSAVE for SYNC with target: %s (%zu replica(s))",
             disk ? "disk" : "replicas sockets", batch.size());
  // Redis' next line, which tools wait for.
  LOG_NOTICE("%s started by pid %d", disk ? "Background saving" : "Background RDB transfer",
             static_cast<int>(pid));
}

void Primary::RunChild(const std::vector<int>& fds, const std::vector<SnapshotRing*>& rings,
                       int64_t offset, bool disk, uint8_t* report) {
  auto tell = [&](size_t i, bool ok) {
    if (report) report[i] = ok ? 1 : 2;
  };
  SetLogRole('C');
  std::string mark = RandomHex40();
  persist::SnapshotInfo info;
  info.version = kRedisCompatVersion;
  info.has_repl = true;
  info.repl_id = replid_;
  info.repl_offset = offset;
  persist::RdbWriteOptions opts;
  opts.compression = host_.ConfigBool("rdbcompression");
  opts.checksum = host_.ConfigBool("rdbchecksum");
  opts.limits = host_.keyspace().limits();
  opts.key_save_delay_us = static_cast<int>(host_.ConfigInt("rdb-key-save-delay"));
  if (child_filter_.functions) opts.functions = host_.FunctionCodes();
  opts.keys = child_filter_.keys;
  if (host_.ConfigBool("rdb-save-incremental-fsync")) opts.autosync_bytes = persist::kAutoSyncBytes;
  int timeout_ms = static_cast<int>(host_.ConfigInt("repl-timeout") * 1000);
  std::string path = host_.ConfigString("dbfilename");
  // Progress of the transfer, once a second.
  uint64_t total_keys = host_.keyspace().TotalKeys();
  int64_t start = MonoMs(), last_log = start;
  persist::ChildInfo& child_info = host_.child_info();
  opts.progress = [&](uint64_t bytes, uint64_t keys) {
    child_info.Progress(keys);
    int64_t now = MonoMs();
    if (now - last_log < 1000) return;
    last_log = now;
    double secs = (now - start) / 1000.0, done = total_keys ? double(keys) / total_keys : 1.0;
    LOG_NOTICE("Replica sync: %.1f MB %s, %llu/%llu keys (%.0f%%), %.1f MB/s, ETA %.0f s",
               bytes / 1e6, disk ? "saved" : "sent", static_cast<unsigned long long>(keys),
               static_cast<unsigned long long>(total_keys), 100 * done, bytes / 1e6 / secs,
               done > 0 ? secs / done - secs : 0.0);
  };
  // The replicas on `fds` from `waiting_from` on have had nothing since +FULLRESYNC (the file is
  // being saved, or others get their payload first): a newline once a second keeps their
  // repl-timeout from running out, as Redis does for replicas waiting for a disk-based save.
  // (A data-link replica's control connection stays quiet: it waits on its link.)
  size_t waiting_from = 0;
  int64_t last_keepalive = start;
  auto keepalive = [&] {
    int64_t now = MonoMs();
    if (now - last_keepalive < 1000) return;
    last_keepalive = now;
    for (size_t i = waiting_from; i < fds.size(); i++) SendKeepalive(fds[i]);
  };
  opts.tick = keepalive;
  if (disk) {
    Status st =
        persist::SaveRdbFile(host_.keyspace(), path, opts, persist::StandardAux(info), nullptr);
    if (!st.ok()) {
      LOG_WARNING("Snapshot for replication failed: %s", st.message().c_str());
      _exit(1);
    }
    LOG_NOTICE("DB saved on disk");
  }
  tell(0, true);  // the snapshot is made (saved, or about to be streamed)
  bool ok = true;
  if (disk) {
    // The saved file, to one socket after the other (the data links map it themselves).
    for (size_t i = 0; i < fds.size(); i++) {
      waiting_from++;  // this one's payload starts: no newline may come into it
      PollingSink sink(fds[i], timeout_ms);
      Status st = SendFile(sink, fds[i], path, timeout_ms, keepalive);
      tell(1 + i, st.ok());
      if (!st.ok()) {
        LOG_WARNING("Snapshot transfer to a replica failed: %s", st.message().c_str());
        ok = false;
      }
    }
    if (ok) child_info.Finish(total_keys);
    _exit(ok ? 0 : 1);
  }
  // Diskless: one walk of the dataset feeds every replica of the batch at once, the data
  // links' rings (the raw RDB: the data link carries no framing) and the sockets (framed by
  // $EOF: and the mark).
  std::vector<std::unique_ptr<persist::Sink>> owned;
  std::vector<persist::Sink*> targets;
  auto add = [&](std::unique_ptr<persist::Sink> inner) {
    owned.push_back(std::move(inner));
    owned.push_back(std::make_unique<FailingSink>(*owned.back(), fail_snapshot_after_));
    targets.push_back(owned.back().get());
  };
  // A target that stops taking bytes (a socket not read, a ring not emptied) holds the others
  // up: with company, it drops out at half the repl-timeout, before the others' replicas time
  // out waiting. (A lone ring waits: its link's own timeouts, and rebuilds, decide.)
  bool company = rings.size() + fds.size() > 1;
  int shared_timeout_ms = std::max(timeout_ms / 2, 1000);
  for (SnapshotRing* ring : rings) {
    add(std::make_unique<RingSink>(*ring, company ? shared_timeout_ms : -1));
  }
  for (int fd : fds) {
    add(std::make_unique<PollingSink>(fd, company ? shared_timeout_ms : timeout_ms));
  }
  waiting_from = fds.size();
  FanOutSink fan(targets);
  std::string head = "$EOF:" + mark + "\r\n";
  for (size_t i = 0; i < fds.size(); i++) {
    PollingSink sink(fds[i], timeout_ms);
    if (Status st = sink.Write(head.data(), head.size()); !st.ok()) fan.Fail(rings.size() + i, st);
  }
  Status walk = targets.empty() ? Status::Ok()
                                : persist::WriteRdb(host_.keyspace(), fan, opts,
                                                    persist::StandardAux(info), nullptr);
  for (size_t i = 0; i < targets.size(); i++) {
    Status st = walk.ok() ? fan.status(i) : walk;
    bool ring = i < rings.size();
    if (ring) {
      rings[i]->Finish(st.ok());
    } else if (st.ok()) {
      PollingSink sink(fds[i - rings.size()], timeout_ms);
      st = sink.Write(mark.data(), mark.size());
    }
    tell(1 + i, st.ok());
    if (!st.ok()) {
      LOG_WARNING("Snapshot transfer to a replica%s failed: %s", ring ? "'s data link" : "",
                  st.message().c_str());
      ok = false;
    }
  }
  if (ok) child_info.Finish(total_keys);
  _exit(ok ? 0 : 1);
}

void Primary::SnapshotDone(bool ok) {
  std::unique_ptr<ChildReport> report = std::move(child_report_);
  for (auto& r : replicas_) {
    if (r->state != State::kSendingSnapshot || r->file_on_link) continue;
    // A child that failed some transfers (a replica went away mid-way) still delivered the
    // others: those go on.
    bool gets_file = r->data && !child_file_.empty();
    if (!ok && !(report && report->Delivered(r->client->id(), gets_file))) {
      // What the replica got is a truncated snapshot: nothing may follow it. Redis 7.0 logs
      // the same line.
      LOG_WARNING("SYNC failed. BGSAVE child returned an error");
      r->client->RequestClose();
      continue;
    }
    // A data link of a disk-based sync sends the file now, ahead of the stream it queued; the
    // replica goes online once the file is delivered (Cron, or its first ACK).
    if (r->data && !child_file_.empty()) {
      r->data->SetSnapshotFile(child_file_);
      r->file_on_link = true;
      continue;
    }
    if (r->filter.rdb_only) {
      // It asked for the snapshot alone (redis-cli --rdb): no stream follows, as in Redis.
      LOG_NOTICE("RDB transfer completed, rdb only replica (%s) should be disconnected asap",
                 r->client->peer().c_str());
      r->client->RequestClose();
      continue;
    }
    PutOnline(*r);
    if (!r->data && child_file_.empty() && !r->acked) {
      // The replica finds the end of a streamed RDB by its mark, at the end of what it reads:
      // nothing may follow the mark before the replica has read it, so the stream waits for
      // the ACK it sends once loaded (which may come before the primary learns that the child
      // has exited: then the stream starts at once).
      r->stream_on_ack = true;
      LOG_NOTICE(
          "Streamed RDB transfer with replica %s succeeded (socket). Waiting for REPLCONF "
          "ACK from replica to enable streaming",
          r->client->peer().c_str());
      continue;
    }
    StartStream(*r);
  }
}

void Primary::PutOnline(AttachedReplica& r) {
  r.state = State::kOnline;
  r.file_on_link = false;
  r.ack_ms = WallMs();
  LOG_NOTICE("Synchronization with replica %s succeeded", r.client->peer().c_str());
}

void Primary::StartStream(AttachedReplica& r) {
  r.stream_on_ack = false;
  // A data link was sent the stream all along (behind its snapshot).
  if (r.pin.valid()) r.client->StartStream(std::move(r.pin));
  r.pin = Backlog::Cursor();
}

}  // namespace kv::repl
