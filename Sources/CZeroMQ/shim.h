#ifndef CZEROMQ_SHIM_H
#define CZEROMQ_SHIM_H
#include <zmq.h>
#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <sys/prctl.h>

/// errno is a macro on glibc; Swift reads it through this wrapper.
static inline int czmq_errno(void) { return errno; }

/// Names the calling thread (shown by top -H, perf, gdb); at most 15 bytes are kept.
static inline void czmq_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
#endif
