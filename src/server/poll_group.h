// A poll group: one IO thread with its own event loop and the connections assigned to it.
// Connections are handed to groups round-robin at accept time and stay there for their life.
#pragma once

#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>

#include "net/event_loop.h"
#include "net/socket.h"

namespace kv::server {

class Client;
class Server;

class PollGroup {
 public:
  PollGroup(Server& server, int index);
  ~PollGroup();

  // Starts the loop's thread; returns once it runs.
  void StartThread();
  // Starts the group's part of the clients' cron (Redis' clientsCron, for the buffers a loop
  // thread owns): every 1000/hz ms, each client's query and reply buffers are resized to what
  // it has used lately (Client::CronBuffers).
  void StartClientsCron();
  void StopAndJoin();

  net::EventLoop& loop() { return loop_; }
  int index() const { return index_; }

  // Takes a freshly accepted connection. Any thread.
  // Takes a new connection. `init` (optional) runs on the loop thread before the client starts
  // reading (the replication link marks its master client there).
  void Adopt(net::Fd fd, uint64_t client_id, std::function<void(Client&)> init = nullptr);
  // Runs fn with the client if it still exists. Loop thread.
  Client* Find(uint64_t id);
  // Destroys a closed client at the end of the current loop iteration. Loop thread.
  void Retire(uint64_t id);
  size_t size() const { return clients_.size(); }
  // Visits the group's clients. Loop thread.
  template <typename F>
  void ForEach(F&& f) {
    for (auto& [id, c] : clients_) f(*c);
  }

 private:
  Server& server_;
  int index_;
  net::EventLoop loop_;
  std::thread thread_;
  std::unordered_map<uint64_t, std::unique_ptr<Client>> clients_;
};

}  // namespace kv::server
