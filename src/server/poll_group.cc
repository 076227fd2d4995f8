#include "server/poll_group.h"

#include <future>

#include "common/logging.h"
#include "common/sharded_counter.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {

PollGroup::PollGroup(Server& server, int index) : server_(server), index_(index) {}

PollGroup::~PollGroup() { StopAndJoin(); }

void PollGroup::StartThread() {
  std::promise<void> started;
  thread_ = std::thread([this, &started] {
    SetCounterShard(static_cast<unsigned>(index_) + 1);
    // Thread-locals with destructors register them under the dynamic loader's lock; done now,
    // a first request never waits for a library being opened meanwhile (libfabric's, ~200 ms).
    Client::InitThreadState();
    started.set_value();
    loop_.Run();
    // Close what is left on the loop thread, where clients live.
    std::vector<uint64_t> ids;
    for (auto& [id, c] : clients_) ids.push_back(id);
    for (uint64_t id : ids) {
      if (Client* c = Find(id)) c->Close("server shutting down");
    }
    clients_.clear();
  });
  started.get_future().wait();
}

void PollGroup::StartClientsCron() {
  loop_.Post([this] {
    loop_.AddTimer(1000 / server_.hz(), [this] {
      int64_t now = loop_.now_ms();
      // DEBUG PAUSE-CRON stops it too, as it stops Redis' clientsCron.
      if (!server_.debug_state().pause_cron.load(std::memory_order_relaxed)) {
        std::vector<uint64_t> over;
        for (auto& [id, c] : clients_) {
          c->CronBuffers(now);
          if (c->CronOverOutputLimit()) over.push_back(id);
        }
        for (uint64_t id : over) {
          if (Client* c = Find(id)) {
            c->LogOverLimit();
            c->Close("output buffer limit");
          }
        }
      }
      return int64_t{1000 / server_.hz()};
    });
  });
}

void PollGroup::StopAndJoin() {
  if (!thread_.joinable()) return;
  loop_.Stop();
  thread_.join();
}

void PollGroup::Adopt(net::Fd fd, uint64_t client_id, std::function<void(Client&)> init) {
  int raw = fd.Release();
  loop_.Post([this, raw, client_id, init = std::move(init)] {
    auto c = std::make_unique<Client>(server_, *this, net::Fd(raw), client_id);
    Client* p = c.get();
    clients_.emplace(client_id, std::move(c));
    if (init) init(*p);
    p->Start();
  });
}

Client* PollGroup::Find(uint64_t id) {
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second.get();
}

void PollGroup::Retire(uint64_t id) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  // The client may be on the call stack (closing itself): free it after this event.
  std::shared_ptr<Client> doomed(it->second.release());
  clients_.erase(it);
  loop_.Post([doomed] {});
}

}  // namespace kv::server
