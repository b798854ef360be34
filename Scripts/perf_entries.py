#!/usr/bin/env python3
"""Reads `perf script` output (samples with call chains) and attributes each sample to its thread and to the
first user-space frame of its chain: for kernel samples, the libc call that entered the kernel (poll, send,
recv, epoll_wait, read, write...). Used by Scripts/profile. Usage: perf script -i X | perf_entries.py"""
import collections
import sys

samples = collections.Counter()
entries = collections.Counter()
kernel = collections.Counter()
total = 0


def flush(comm, frames):
    global total
    if comm is None:
        return
    total += 1
    samples[comm] += 1
    if frames and frames[0][1] == "[kernel.kallsyms]":
        entry = next((f"{sym} ({dso.rsplit('/', 1)[-1]})" for sym, dso in frames if dso != "[kernel.kallsyms]"),
                     "(kernel only)")
        entries[(comm, entry)] += 1
        kernel[comm] += 1


comm, frames = None, []
for line in sys.stdin:
    if not line.strip():
        flush(comm, frames)
        comm, frames = None, []
    elif not line[0].isspace():
        flush(comm, frames)
        comm, frames = line.split()[0], []
    else:
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            rest = parts[1]
            dso = rest[rest.rfind("(") + 1:-1] if rest.endswith(")") else "?"
            sym = rest[:rest.rfind("(")].strip() if "(" in rest else rest
            frames.append((sym.split("+0x")[0], dso))
flush(comm, frames)

print(f"samples: {total}")
for c, n in samples.most_common():
    print(f"thread {c:<18} {100 * n / total:5.1f}% of samples, of which in the kernel {100 * kernel[c] / total:5.1f}%")
print("\nkernel time by the user-space call that entered it (percent of all samples):")
for (c, entry), n in entries.most_common(12):
    print(f"  {100 * n / total:5.1f}%  {c:<18} {entry}")
