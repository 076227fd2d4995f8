// The replica's side of the RDMA data plane, after the sync: the live stream from the data link
// into the master client (see repl_replica.h and docs/replication-rdma.md).
#include <poll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "server/client.h"
#include "server/poll_group.h"
#include "repl/datalink/data_link.h"
#include "server/repl_replica.h"
#include "server/server.h"
#include "transport/loop_driver.h"

namespace kv::server {

// Where the link has fds (a completion fd on tcp and verbs, the doorbell on shm), the master
// client's poll group drives it: the loop wakes on the fd and hands the bytes straight to the
// master client, as it would read them from a socket. Without fds (shm with a primary that
// rings no doorbell), this thread waits on the link (a timed poll) and posts the bytes to the
// loop. Either way this returns when the link or the
// connection ends: why the link ended ("" when the connection went first).
std::string ReplReplica::DriveDataLink(const Target& t, PollGroup* g, uint64_t client_id) {
  std::vector<pollfd> fds;
  data_->WaitFds(&fds);
  if (fds.empty()) return PumpFromThread(t, g, client_id);
  struct Pump {
    std::mutex mu;
    std::condition_variable cv;
    bool ended = false, gone = false;
    std::string why;
    std::unique_ptr<transport::LoopDriver> driver;
  };
  auto pump = std::make_shared<Pump>();
  transport::StreamReceiver* rx = data_.get();
  uint64_t epoch = master_epoch_.load();
  auto end = [pump](std::string why) {
    pump->driver->Stop();
    std::lock_guard lock(pump->mu);
    pump->ended = true;
    pump->why = std::move(why);
    pump->cv.notify_all();
  };
  g->loop().Post([this, pump, rx, g, client_id, epoch, &t, end] {
    pump->driver = std::make_unique<transport::LoopDriver>(
        &g->loop(), rx, transport::PollMode::kEconomy, 100,
        [this, rx, g, client_id, epoch, &t, end, delivered = false](transport::Link&,
                                                                    int) mutable {
          Client* c = g->Find(client_id);
          if (Cancelled(t) || master_epoch_.load() != epoch || !c) return end("");
          if (ShouldBreakDataLink()) return end(repl::kDataLinkBrokenByDebug);
          bool got = false;
          for (auto span = rx->Peek(); !span.empty(); span = rx->Peek()) {
            c->InjectInput(std::string_view(reinterpret_cast<const char*>(span.data()),
                                            span.size()));
            data_bytes_ += span.size();
            got = true;
            if (Status st = rx->Consume(span.size()); !st.ok()) return end(st.message());
          }
          if (got) {
            if (!std::exchange(delivered, true)) DataLinkDelivered();
            c->ResumeInput();
          }
          if (!rx->status().ok()) return end(rx->status().message());
          if (rx->eof()) return end("the primary ended the data stream");
        });
    if (Status st = pump->driver->Start(); !st.ok()) end(st.message());
  });
  std::string why;
  {
    std::unique_lock lock(pump->mu);
    pump->cv.wait(lock, [&] { return pump->ended; });
    why = pump->why;
  }
  // The driver goes on the loop's thread, before the link it drives.
  g->loop().Post([pump] {
    pump->driver.reset();
    std::lock_guard lock(pump->mu);
    pump->gone = true;
    pump->cv.notify_all();
  });
  std::unique_lock lock(pump->mu);
  pump->cv.wait(lock, [&] { return pump->gone; });
  return why;
}

std::string ReplReplica::PumpFromThread(const Target& t, PollGroup* g, uint64_t client_id) {
  // Bytes posted to the loop that it has not handed to the master client yet (its thread may
  // wait for the keyspace lock): past kMaxPosted this thread leaves the link's bytes where they
  // are, and the link's credits hold the primary back, where this replica's output-buffer limit
  // applies, as a socket that is not read pushes back over TCP.
  static constexpr size_t kMaxPosted = 4 << 20;
  auto posted = std::make_shared<std::atomic<size_t>>(0);
  uint64_t epoch = master_epoch_.load();
  bool delivered = false;
  while (true) {
    if (Cancelled(t) || master_epoch_.load() != epoch) return "";  // the connection went away
    if (ShouldBreakDataLink()) return repl::kDataLinkBrokenByDebug;
    if (posted->load() >= kMaxPosted) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    auto span = data_->Peek();
    if (!span.empty()) {
      *posted += span.size();
      PostToMaster(g, client_id,
                   std::string(reinterpret_cast<const char*>(span.data()), span.size()), posted);
      data_bytes_ += span.size();
      if (Status st = data_->Consume(span.size()); !st.ok()) return st.message();
      if (!std::exchange(delivered, true)) DataLinkDelivered();
      continue;
    }
    if (data_->eof()) return "the primary ended the data stream";
    if (auto r = data_->Wait(100); !r.ok()) return r.status().message();
  }
}

void ReplReplica::PostToMaster(PollGroup* g, uint64_t client_id, std::string bytes,
                               std::shared_ptr<std::atomic<size_t>> posted) {
  g->loop().Post([g, client_id, bytes = std::move(bytes), posted = std::move(posted)] {
    if (Client* c = g->Find(client_id)) {
      c->InjectInput(bytes);
      c->ResumeInput();
    }
    if (posted) *posted -= bytes.size();
  });
}

void ReplReplica::PumpDataLink(const Target& t, uint64_t client_id, std::string pending) {
  PollGroup* g = &server_.group(0);
  if (!pending.empty()) PostToMaster(g, client_id, std::move(pending));
  data_->UseStreamPollMode();
  std::string why = DriveDataLink(t, g, client_id);
  data_up_ = false;
  data_->Close();
  data_.reset();
  if (why.empty()) return;
  LOG_WARNING("Replication data link failed: %s. Dropping the connection; it resumes with PSYNC.",
              why.c_str());
  DataLinkFailed(why);
  std::lock_guard lock(server_.mu());
  if (master_id_ == client_id) {
    auto it = server_.clients().find(client_id);
    if (it != server_.clients().end()) it->second->RequestClose();
  }
}

void ReplReplica::DataLinkDelivered() {
  std::lock_guard lock(server_.mu());
  data_failures_ = 0;
}

}  // namespace kv::server
