// RAII owners for libfabric objects. Every fid this module opens is held by one of these, so a
// failed setup or a torn-down link releases everything in reverse order of creation (declare
// members in creation order: fabric, domain, queues, memory regions, endpoints).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "transport/fabric/fi_library.h"

namespace kv::transport::fabric {

// The libfabric API version this module is written against (Debian 12 ships 1.17).
inline constexpr uint32_t kFiVersion = FI_VERSION(1, 17);

// Closes any fid-bearing libfabric object (fid_fabric, fid_domain, fid_ep, fid_pep, fid_cq,
// fid_eq, fid_av, fid_mr: all start with `struct fid fid`).
template <typename T>
struct FiCloser {
  void operator()(T* p) const {
    if (p != nullptr) fi_close(&p->fid);
  }
};
template <typename T>
using FiPtr = std::unique_ptr<T, FiCloser<T>>;

using FabricPtr = FiPtr<fid_fabric>;
using DomainPtr = FiPtr<fid_domain>;
using EpPtr = FiPtr<fid_ep>;
using PepPtr = FiPtr<fid_pep>;
using CqPtr = FiPtr<fid_cq>;
using EqPtr = FiPtr<fid_eq>;
using AvPtr = FiPtr<fid_av>;
using MrPtr = FiPtr<fid_mr>;

struct InfoFreer {
  void operator()(fi_info* p) const {
    if (p != nullptr) FiFreeinfo(p);
  }
};
using InfoPtr = std::unique_ptr<fi_info, InfoFreer>;

// fi_dupinfo as an owner; never null (aborts on allocation failure like new does).
InfoPtr DupInfo(const fi_info* info);

// A Status for a failed libfabric call: "<what>: <fi_strerror>" with code kIoError
// (kClosed for errors that mean the peer or connection is gone).
Status FiError(const std::string& what, int ret);

// Reads the error entry behind -FI_EAVAIL on a CQ and renders it as a Status.
Status CqError(fid_cq* cq, const std::string& what);

}  // namespace kv::transport::fabric
