// The replica's side of the RDMA data plane (see repl_replica.h and docs/replication-rdma.md):
// negotiating the data link in the handshake, loading a full resync's snapshot through it, and
// pumping the live stream from it into the master client.
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "server/client.h"
#include "server/poll_group.h"
#include "server/repl_link_io.h"
#include "server/repl_primary.h"
#include "server/repl_rdma.h"
#include "server/repl_replica.h"
#include "server/server.h"

namespace kv::server {

bool ReplReplica::UseDataLink() const {
  std::lock_guard lock(server_.mu());
  return server_.config().GetString("repl-transport") != "tcp" && !fell_back_;
}

void ReplReplica::DataLinkFailed(const std::string& why) {
  std::lock_guard lock(server_.mu());
  data_errors_++;
  if (++data_failures_ >= 3 && !fell_back_) {
    fell_back_ = true;
    data_fallbacks_++;
    LOG_WARNING("The RDMA data link to %s:%d keeps failing (%s): falling back to TCP for this "
                "primary", host_.c_str(), port_, why.c_str());
  }
}

Result<bool> ReplReplica::SetupDataLink(LinkIo& io, const Target& t) {
  std::string provider, mode;
  {
    std::lock_guard lock(server_.mu());
    provider = server_.config().GetString("repl-rdma-provider");
    mode = server_.config().GetString("repl-transport");
  }
  // `auto` uses the data plane only where it pays: on an RDMA NIC (verbs), unless a provider is
  // named. Without one the link simply stays on TCP.
  bool automatic = mode == "auto";
  if (automatic && provider == "auto") provider = "verbs";
  auto receiver_r = transport::CreateReceiver(DataLinkOptions(provider), 0);
  if (!receiver_r.ok() && automatic) {
    LOG_VERBOSE("No RDMA data plane here (%s): replicating over TCP",
                receiver_r.status().message().c_str());
    return false;
  }
  if (!receiver_r.ok()) return receiver_r.status();
  auto receiver = std::move(*receiver_r);
  KV_TRY_ASSIGN(blob, receiver->LocalBlob());
  KV_TRY(io.WriteAll(ReplCommand({"REPLCONF", "rdma", provider, HexEncode(blob)})));
  KV_TRY_ASSIGN(line, io.ReadLine());
  std::string peer;
  if (line.rfind("+RDMA ", 0) != 0 || !HexDecode(std::string_view(line).substr(6), &peer)) {
    // Any primary without the extension (redis-server) refuses the option: stay on TCP.
    LOG_NOTICE("Primary %s:%d does not offer the RDMA data plane (%s): replicating over TCP",
               t.host.c_str(), t.port, line.substr(0, 120).c_str());
    return false;
  }
  KV_TRY(receiver->Connect(peer));
  std::string describe = receiver->Describe();
  {
    std::lock_guard lock(server_.mu());
    data_describe_ = describe;
  }
  LOG_NOTICE("RDMA data link to the primary is up (%s)", describe.c_str());
  data_ = std::move(receiver);
  return true;
}

// The data link as a loader Source. Views stay valid until the next Read.
class ReplReplica::ChannelSource : public BufferedSource {
 public:
  ChannelSource(ReplReplica& owner, const Target& t, transport::StreamReceiver& rx)
      : owner_(owner), t_(t), rx_(rx) {}

 private:
  Status Fill(size_t) override {
    int64_t idle_since = MonoMs();
    while (true) {
      if (owner_.Cancelled(t_)) return Status::Closed("cancelled");
      if (owner_.break_data_.exchange(false)) return Status::Closed("data link broken (DEBUG)");
      auto span = rx_.Peek();
      if (!span.empty()) {
        buf_.append(reinterpret_cast<const char*>(span.data()), span.size());
        KV_TRY(rx_.Consume(span.size()));
        owner_.sync_read_ += static_cast<int64_t>(span.size());
        owner_.data_bytes_ += span.size();
        owner_.sync_last_io_ms_ = WallMs();
        return Status::Ok();
      }
      if (rx_.eof()) return Status::Closed("the primary ended the data stream");
      if (MonoMs() - idle_since > 60000) return Status::IoError("data link stalled");
      KV_TRY(rx_.Wait(100).status());
    }
  }

  ReplReplica& owner_;
  const Target& t_;
  transport::StreamReceiver& rx_;
};

Status ReplReplica::LoadFromDataLink(const Target& t, int fd, const std::string& replid,
                                     int64_t offset) {
  sync_total_ = -1;
  sync_read_ = 0;
  LOG_NOTICE("MASTER <-> REPLICA sync: loading the snapshot from the RDMA data link");
  int64_t start = MonoMs();
  std::unique_ptr<store::Keyspace> side;
  uint64_t keys = 0;
  ChannelSource src(*this, t, *data_);
  Status st = LoadSide(src, "over the data link", &side, &keys);
  if (!st.ok()) {
    LOG_WARNING("Failed loading the snapshot from the data link: %s", st.message().c_str());
    DataLinkFailed(st.message());
    data_.reset();
    return st;
  }
  uint64_t id;
  {
    std::lock_guard lock(server_.mu());
    if (Cancelled(t)) return Status::Ok();
    InstallSide(*side, replid, offset);
    LOG_NOTICE("MASTER <-> REPLICA sync: Finished with success (%llu keys, loaded from the RDMA "
               "data link in %.3f s)", static_cast<unsigned long long>(keys),
               (MonoMs() - start) / 1000.0);
    AdoptMaster(fd, "", 0);
    id = master_id_;
  }
  side.reset();  // the old dataset, freed outside the lock
  PumpDataLink(t, id, src.Rest());
  return Status::Ok();
}

void ReplReplica::PumpDataLink(const Target& t, uint64_t client_id, std::string pending) {
  PollGroup* g = &server_.group(0);
  auto post = [g, client_id](std::string bytes) {
    g->loop().Post([g, client_id, bytes = std::move(bytes)] {
      if (Client* c = g->Find(client_id)) {
        c->InjectInput(bytes);
        c->ResumeInput();
      }
    });
  };
  if (!pending.empty()) post(std::move(pending));
  uint64_t epoch = master_epoch_.load();
  std::string why;
  bool delivered = false;
  while (true) {
    if (Cancelled(t) || master_epoch_.load() != epoch) break;  // the connection went away
    if (break_data_.exchange(false)) {
      why = "data link broken (DEBUG REPLICATION-BREAK-DATA-LINK)";
      break;
    }
    auto span = data_->Peek();
    if (!span.empty()) {
      post(std::string(reinterpret_cast<const char*>(span.data()), span.size()));
      data_bytes_ += span.size();
      Status st = data_->Consume(span.size());
      if (!st.ok()) {
        why = st.message();
        break;
      }
      if (!delivered) {
        delivered = true;
        std::lock_guard lock(server_.mu());
        data_failures_ = 0;
      }
      continue;
    }
    if (data_->eof()) {
      why = "the primary ended the data stream";
      break;
    }
    auto r = data_->Wait(100);
    if (!r.ok()) {
      why = r.status().message();
      break;
    }
  }
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

}  // namespace kv::server
