// The data link's snapshot: written to the replica straight from the snapshot child's ring
// (diskless) or from the mapping of the saved file (disk-based), and resent from either over a
// rebuilt link (Replay). The link's lifecycle and the live stream: data_link.cc.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/clock.h"
#include "common/logging.h"
#include "repl/datalink/data_link.h"

namespace kv::repl {

Status DataLinkSender::WriteFromRegion(const transport::SourceRegion& region,
                                       std::span<const uint8_t> part, int64_t* last_progress_ms) {
  KV_TRY_ASSIGN(n, sender_->WriteFrom(region, UpToFailurePoint(part)));
  if (n == 0) return AwaitCredit(last_progress_ms);
  bytes_ += n;
  *last_progress_ms = MonoMs();
  return Status::Ok();
}

Status DataLinkSender::DrainRegionWrites() {
  while (sender_->WritesInFlight()) {
    if (Stopped()) return Status::Closed("data link closed");
    KV_TRY(DebugFailure());  // also Resume()'s: the replica gave this link up
    KV_TRY(sender_->Wait(100, nullptr, &io_mu_).status());
  }
  NoteStats();
  return Status::Ok();
}

Status DataLinkSender::AwaitAcked(uint64_t end) {
  int64_t last_progress = MonoMs();
  uint64_t acked = sender_->acked_offset();
  while (acked < end) {
    KV_TRY(AwaitCredit(&last_progress));
    if (sender_->acked_offset() != acked) {
      acked = sender_->acked_offset();
      last_progress = MonoMs();
    }
  }
  return Status::Ok();
}

Status DataLinkSender::SendRing() {
  SnapshotRing& ring = *ring_;
  int64_t start = MonoMs();
  Status result = [&]() -> Status {
    KV_TRY_ASSIGN(region, sender_->RegisterSource(ring.memory()));
    int64_t last_progress = MonoMs();
    Status s;
    while (s.ok()) {
      if (s = DebugFailure(); !s.ok()) break;
      uint64_t acked = sender_->acked_offset();
      if (acked > ring_base_) ring.Release(acked - ring_base_);
      bool finished = ring.finished();  // before looking for bytes: none follow once it is set
      uint64_t pos = bytes_ - ring_base_;
      auto part = ring.Readable(pos);
      if (part.empty()) {
        if (finished) break;
        if (Stopped()) {
          s = Status::Closed("data link closed");
          break;
        }
        // The child is serializing (a slow child is no stall of the link): keep completions
        // and credits moving meanwhile.
        if (auto p = sender_->Progress(); !p.ok()) {
          s = p.status();
          break;
        }
        ring.WaitForBytes(pos, sender_->WritesInFlight() ? 1 : 10);
        last_progress = MonoMs();
        continue;
      }
      s = WriteFromRegion(*region, part, &last_progress);
    }
    // The region (and the ring) must outlive the writes posted from it. After a failure the
    // ring stays as it is (mapped until the sender goes) for a rebuilt link, and so it does
    // until the replica has acknowledged the whole snapshot: the last chunks may wait in its
    // ring, unconsumed, and go with a link that fails meanwhile.
    if (s.ok()) s = DrainRegionWrites();
    if (s.ok() && !ring.failed()) s = AwaitAcked(bytes_);
    return s;
  }();
  if (!result.ok()) return result;
  double mb = static_cast<double>(bytes_ - ring_base_) / 1e6;
  if (ring.failed()) {
    // What the replica got is a truncated snapshot: nothing may follow it on this link (the
    // primary drops the replica once it reaps the child).
    char what[80];
    snprintf(what, sizeof what, "the snapshot child failed after %.1f MB", mb);
    return Status::IoError(what);
  }
  LOG_NOTICE(
      "Sent the %.1f MB snapshot to the replica's data link from the child's ring in "
      "%.3f s",
      mb, (MonoMs() - start) / 1000.0);
  std::lock_guard lock(mu_);
  ring_.reset();
  return result;
}

Status DataLinkSender::MapFile(const std::string& path, net::Fd fd) {
  if (!fd.valid()) return Status::IoError("snapshot file " + path + " could not be opened");
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || st.st_size <= 0) {
    return Status::IoError("snapshot file " + path + " is empty or unreadable");
  }
  size_t size = static_cast<size_t>(st.st_size);
  // MAP_PRIVATE: the file's own page-cache pages all the same (nothing writes them), and
  // verbs can register them; the kernel pins no page of a read-only MAP_SHARED mapping.
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  fd.Reset();  // the mapping keeps the file (even once a later save renames over it)
  if (map == MAP_FAILED) return Status::FromErrno("mmap " + path, errno);
  madvise(map, size, MADV_SEQUENTIAL);
  file_ = {static_cast<const uint8_t*>(map), size, bytes_.load()};
  file_unsent_ = true;
  return Status::Ok();
}

void DataLinkSender::UnmapFile() {
  if (!file_.data) return;
  munmap(const_cast<uint8_t*>(file_.data), file_.size);
  file_ = {};
  file_unsent_ = false;
}

// The mapping is registered with the link once and written chunk by chunk straight from it
// (no staging copy on fabric links), from the byte the replica has not got yet.
Status DataLinkSender::SendMapped() {
  auto bytes = std::span<const uint8_t>(file_.data, file_.size);
  int64_t start = MonoMs();
  Status result = [&]() -> Status {
    KV_TRY_ASSIGN(region, sender_->RegisterSource(bytes));
    int64_t last_progress = MonoMs();
    Status s;
    while (s.ok()) {
      size_t pos = static_cast<size_t>(bytes_ - file_.base);
      if (pos >= bytes.size()) break;
      if (s = DebugFailure(); !s.ok()) break;
      s = WriteFromRegion(*region, bytes.subspan(pos), &last_progress);
    }
    // The region (and the mapping) must outlive the writes posted from it. After a failure
    // the mapping stays for a rebuilt link, and so it does until the replica has acknowledged
    // the whole file (see SendRing).
    if (s.ok()) s = DrainRegionWrites();
    if (s.ok()) s = AwaitAcked(bytes_);
    return s;
  }();
  if (result.ok()) {
    LOG_NOTICE(
        "Sent the %.1f MB snapshot file to the replica's data link from its mapping in "
        "%.3f s",
        static_cast<double>(bytes.size()) / 1e6, (MonoMs() - start) / 1000.0);
    UnmapFile();
    file_delivered_ = true;
  }
  return result;
}

Status DataLinkSender::Replay() {
  uint64_t from = sender_->start_offset();
  // What this link kept: the whole file, or the ring from its released offset on (the replica
  // acknowledged the bytes before it).
  bool file = file_.data != nullptr;
  uint64_t have = file ? file_.base : ring_ ? ring_base_ + ring_->released() : bytes_.load();
  if ((!file && !ring_) || from < have || from > bytes_) {
    return Status::Invalid("the replica resumes at byte " + std::to_string(from) +
                           ", outside what this link kept (" + std::to_string(have) + ".." +
                           std::to_string(bytes_.load()) + ")");
  }
  LOG_NOTICE("Replication data link rebuilt (%s): resending the snapshot%s from byte %llu",
             describe_.c_str(), file ? " file" : "", static_cast<unsigned long long>(from));
  bytes_ = from;  // SendMapped or SendRing goes on from there
  return Status::Ok();
}

}  // namespace kv::repl
