// libfabric, opened on first use (dlopen) instead of linked: the library pulls in providers
// whose load-time constructors calibrate clocks (Debian's libpsm2 and libinfinipath spend
// ~200 ms in sleeps), which a linked kvstore-server paid at every start, TCP-only included.
// Only the library's five exported entry points used here go through this file; everything
// else in the libfabric API is inline calls through the objects' operation tables.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>

namespace kv::transport::fabric {

// True once libfabric is open (the first call tries); false, with a log line, where
// libfabric.so.1 cannot be opened: every fabric call then fails with -FI_ENOSYS.
bool FiAvailable();

int FiGetinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
              const fi_info* hints, fi_info** info);
void FiFreeinfo(fi_info* info);
// fi_dupinfo (null: a fresh fi_allocinfo).
fi_info* FiDupinfo(const fi_info* info);
int FiFabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
const char* FiStrerror(int err);

}  // namespace kv::transport::fabric
