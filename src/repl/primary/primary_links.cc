// The primary's data links (repl/datalink/data_link.h): set up and rebuilt on a replica's REPLCONF,
// fed the stream one client batch at a time and written once the keyspace lock is released, and
// torn down off the lock.
#include <algorithm>
#include <thread>

#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "transport/wire.h"

namespace kv::repl {

namespace {
// The peer's setup blob from REPLCONF's hex argument; false (and the error reply) when it is
// not one.
bool DecodePeerBlob(cmd::Context& c, std::string_view hex_blob, std::string* peer) {
  if (HexDecode(hex_blob, peer) && transport::Blob::Decode(*peer).ok()) return true;
  c.Error("malformed data link blob");
  return false;
}
}  // namespace

void Primary::DropDataLink(std::shared_ptr<DataLinkSender> link) {
  if (!link) return;
  link->Break();
}  // whichever reference goes last, its deleter (SetupDataLink) destroys the link off-thread

void Primary::HoldDataLinkBytes() { hold_data_links_ = true; }

void Primary::FlushDataLinkBytes() {
  for (auto& r : replicas_) {
    if (r->data_batch.empty()) continue;
    if (r->data && !OverOutputLimit(*r, r->data->Unsent() + r->data_batch.size())) {
      r->data->Enqueue(r->data_batch);
      if (std::find(to_kick_.begin(), to_kick_.end(), r->data) == to_kick_.end()) {
        to_kick_.push_back(r->data);
      }
    }
    if (r->data_batch.capacity() > (1 << 20))
      std::string().swap(r->data_batch);
    else
      r->data_batch.clear();
  }
}

void Primary::ReleaseDataLinkBytes(DataLinks* kicks) {
  FlushDataLinkBytes();
  hold_data_links_ = false;
  for (auto& link : to_kick_) {
    if (std::find(kicks->begin(), kicks->end(), link) == kicks->end()) {
      kicks->push_back(std::move(link));
    }
  }
  to_kick_.clear();
}

void Primary::KickDataLinks(DataLinks* links) {
  for (auto& link : *links) link->Kick();
  links->clear();  // a link whose replica went meanwhile may go here: see SetupDataLink
}

void Primary::SetupDataLink(cmd::Context& c, ClientConn& client, std::string_view provider,
                            std::string_view hex_blob) {
  if (host_.ConfigString("repl-transport") == "tcp") {
    c.Error("RDMA data plane disabled (repl-transport tcp)");
    return;
  }
  std::string peer;
  if (!DecodePeerBlob(c, hex_blob, &peer)) return;
  std::string local;
  auto link = DataLinkSender::Create(
      DataLinkOptions(std::string(provider), host_.ConfigString("repl-rdma-poll-mode"),
                      host_.ConfigBool("repl-rdma-doorbell")),
      &local);
  if (!link.ok()) {
    LOG_WARNING("Replica %s asked for an RDMA data link (%s) that cannot be set up here: %s",
                client.peer().c_str(), std::string(provider).c_str(),
                link.status().message().c_str());
    c.Error("RDMA data link unavailable: " + link.status().message());
    return;
  }
  (*link)->Start(std::move(peer));  // connects while the replica connects its end
  // The last reference may go on a poll group's thread (a kick's, at the end of its round) or
  // under the keyspace lock: the link is destroyed (its thread joined) on a thread of its own.
  announced_[client.id()].data =
      std::shared_ptr<DataLinkSender>(link->release(), [](DataLinkSender* l) {
        l->Break();
        std::thread([l] { delete l; }).detach();
      });
  c.out.Simple("RDMA " + HexEncode(local));
}

void Primary::BreakDataLinks(uint64_t after) {
  for (auto& r : replicas_) {
    if (r->data) r->data->FailAfter(after);
  }
}

void Primary::ResumeDataLink(cmd::Context& c, ClientConn& client, std::string_view hex_blob) {
  std::string peer;
  if (!DecodePeerBlob(c, hex_blob, &peer)) return;
  AttachedReplica* r = Find(&client);
  if (r == nullptr || !r->data) {
    c.Error("no data link to resume");
    return;
  }
  std::string local;
  if (Status s = r->data->Resume(std::move(peer), &local); !s.ok()) {
    LOG_WARNING("Could not rebuild the data link of replica %s: %s", client.peer().c_str(),
                s.message().c_str());
    c.Error("RDMA data link unavailable: " + s.message());
    return;
  }
  LOG_NOTICE("Replica %s rebuilds its data link mid-snapshot", client.peer().c_str());
  c.out.Simple("RDMA " + HexEncode(local));
}

}  // namespace kv::repl
