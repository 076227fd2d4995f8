// The replica's side of the RDMA data plane, after the sync: the live stream from the data link
// into the master client (see replica.h and docs/replication-rdma.md).
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
#include "repl/datalink/data_link.h"
#include "repl/replica/replica.h"
#include "transport/loop_driver.h"

namespace kv::repl {

// Where the link has fds (a completion fd on tcp and verbs, the doorbell on shm), the master
// client's poll group drives it: the loop wakes on the fd and hands the bytes straight to the
// master client, as it would read them from a socket. Without fds (shm with a primary that
// rings no doorbell), this thread waits on the link (a timed poll) and posts the bytes to the
// loop. Either way this returns when the link or the
// connection ends: why the link ended ("" when the connection went first).
std::string Replica::DriveDataLink(const Target& t, uint64_t client_id) {
  std::vector<pollfd> fds;
  data_->WaitFds(&fds);
  if (fds.empty()) return PumpFromThread(t, client_id);
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
  net::EventLoop* loop = &server_.master_loop();
  loop->Post([this, pump, rx, loop, client_id, epoch, &t, end] {
    pump->driver = std::make_unique<transport::LoopDriver>(
        loop, rx, transport::PollMode::kEconomy, 100,
        [this, rx, client_id, epoch, &t, end, delivered = false](transport::Link&, int) mutable {
          if (Cancelled(t) || master_epoch_.load() != epoch || !server_.HasClient(client_id)) {
            return end("");
          }
          if (ShouldBreakDataLink()) return end(repl::kDataLinkBrokenByDebug);
          bool got = false;
          for (auto span = rx->Peek(); !span.empty(); span = rx->Peek()) {
            server_.InjectInput(
                client_id,
                std::string_view(reinterpret_cast<const char*>(span.data()), span.size()));
            data_bytes_ += span.size();
            got = true;
            if (Status st = rx->Consume(span.size()); !st.ok()) return end(st.message());
          }
          if (got) {
            if (!std::exchange(delivered, true)) DataLinkDelivered();
            server_.ResumeInput(client_id);
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
  loop->Post([pump] {
    pump->driver.reset();
    std::lock_guard lock(pump->mu);
    pump->gone = true;
    pump->cv.notify_all();
  });
  std::unique_lock lock(pump->mu);
  pump->cv.wait(lock, [&] { return pump->gone; });
  return why;
}

std::string Replica::PumpFromThread(const Target& t, uint64_t client_id) {
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
      PostToMaster(client_id, std::string(reinterpret_cast<const char*>(span.data()), span.size()),
                   posted);
      data_bytes_ += span.size();
      if (Status st = data_->Consume(span.size()); !st.ok()) return st.message();
      if (!std::exchange(delivered, true)) DataLinkDelivered();
      continue;
    }
    if (data_->eof()) return "the primary ended the data stream";
    if (auto r = data_->Wait(100); !r.ok()) return r.status().message();
  }
}

void Replica::PostToMaster(uint64_t client_id, std::string bytes,
                           std::shared_ptr<std::atomic<size_t>> posted) {
  Host* host = &server_;
  host->master_loop().Post([host, client_id, bytes = std::move(bytes), posted = std::move(posted)] {
    if (host->InjectInput(client_id, bytes)) host->ResumeInput(client_id);
    if (posted) *posted -= bytes.size();
  });
}

void Replica::PumpDataLink(const Target& t, uint64_t client_id, std::string pending) {
  if (!pending.empty()) PostToMaster(client_id, std::move(pending));
  data_->UseStreamPollMode();
  std::string why = DriveDataLink(t, client_id);
  data_up_ = false;
  data_->Close();
  data_.reset();
  if (why.empty()) return;
  LOG_WARNING("Replication data link failed: %s. Dropping the connection; it resumes with PSYNC.",
              why.c_str());
  DataLinkFailed(why);
  std::lock_guard lock(server_.mu());
  if (master_id_ == client_id) server_.CloseClient(client_id);
}

void Replica::DataLinkDelivered() {
  std::lock_guard lock(server_.mu());
  data_failures_ = 0;
}

}  // namespace kv::repl
