// Raw fabric operations (the "raw capability" the channel is compared with): write_bw,
// read_bw, send_bw, send_lat over a FabricContext, without credits or descriptors. Over plain
// TCP (--transport tcp) the bandwidth tests stream chunks through a socket and send_lat is a
// socket ping-pong.
#pragma once

#include "perf_common.h"

namespace kv::perf {

// Run after the parameters were exchanged on `control_fd`.
Status RawServer(const PerfOptions& o, int control_fd);
Result<RunResult> RawClient(const PerfOptions& o, int control_fd);

Status SocketServer(const PerfOptions& o, int control_fd);
Result<RunResult> SocketClient(const PerfOptions& o, int control_fd);

Status StreamServer(const PerfOptions& o, int control_fd);
Result<RunResult> StreamClient(const PerfOptions& o, int control_fd);

// The last lockstep step: the client says "done", the server answers with its CPU seconds.
Status ServerReport(int control_fd, double cpu_seconds);
Result<double> ClientCollect(int control_fd);
// True when the peer has sent something on the control link (poll, no read).
bool ControlReadable(int fd);

}  // namespace kv::perf
