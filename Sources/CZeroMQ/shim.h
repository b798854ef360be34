#ifndef CZEROMQ_SHIM_H
#define CZEROMQ_SHIM_H
#include <zmq.h>
#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

/// errno is a macro on glibc; Swift reads it through this wrapper.
static inline int czmq_errno(void) { return errno; }
#endif
