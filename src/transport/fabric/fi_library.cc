#include "transport/fabric/fi_library.h"

#include <dlfcn.h>
#include <rdma/fi_errno.h>

#include <cstdlib>
#include <mutex>

#include "common/logging.h"

namespace kv::transport::fabric {
namespace {

struct Library {
  int (*getinfo)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**) = nullptr;
  void (*freeinfo)(fi_info*) = nullptr;
  fi_info* (*dupinfo)(const fi_info*) = nullptr;
  int (*fabric)(fi_fabric_attr*, fid_fabric**, void*) = nullptr;
  const char* (*strerror)(int) = nullptr;
  bool ok = false;
};

const Library& Lib() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    // libfabric links the Omni-Path/True Scale libraries, and loading libinfinipath puts its
    // own handlers for SIGSEGV, SIGABRT and the other fatal signals over the process': they
    // print a backtrace of their own, write a .btr file into the working directory, and never
    // call the server's crash report. A handler it does not install is one that cannot race
    // the server's re-installation of its own after the library is loaded.
    setenv("IPATH_NO_BACKTRACE", "1", 0);
    void* h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      LOG_WARNING("transport: libfabric could not be opened (%s): the RDMA data plane is off",
                  dlerror());
      return;
    }
    // The versioned names the headers bind to when linking (FABRIC_1.x).
    auto sym = [&](const char* name, const char* version) {
      void* p = dlvsym(h, name, version);
      return p != nullptr ? p : dlsym(h, name);
    };
    lib.getinfo = reinterpret_cast<decltype(lib.getinfo)>(sym("fi_getinfo", "FABRIC_1.3"));
    lib.freeinfo = reinterpret_cast<decltype(lib.freeinfo)>(sym("fi_freeinfo", "FABRIC_1.3"));
    lib.dupinfo = reinterpret_cast<decltype(lib.dupinfo)>(sym("fi_dupinfo", "FABRIC_1.3"));
    lib.fabric = reinterpret_cast<decltype(lib.fabric)>(sym("fi_fabric", "FABRIC_1.1"));
    lib.strerror = reinterpret_cast<decltype(lib.strerror)>(sym("fi_strerror", "FABRIC_1.0"));
    lib.ok = lib.getinfo && lib.freeinfo && lib.dupinfo && lib.fabric && lib.strerror;
    if (!lib.ok)
      LOG_WARNING("transport: libfabric.so.1 lacks an entry point: the RDMA data plane is off");
  });
  return lib;
}

}  // namespace

bool FiAvailable() { return Lib().ok; }

int FiGetinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
              const fi_info* hints, fi_info** info) {
  if (!FiAvailable()) return -FI_ENOSYS;
  return Lib().getinfo(version, node, service, flags, hints, info);
}

void FiFreeinfo(fi_info* info) {
  if (info != nullptr && FiAvailable()) Lib().freeinfo(info);
}

fi_info* FiDupinfo(const fi_info* info) { return FiAvailable() ? Lib().dupinfo(info) : nullptr; }

int FiFabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
  if (!FiAvailable()) return -FI_ENOSYS;
  return Lib().fabric(attr, fabric, context);
}

const char* FiStrerror(int err) {
  return FiAvailable() ? Lib().strerror(err) : "libfabric is not available";
}

}  // namespace kv::transport::fabric
