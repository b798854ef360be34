"""The chaos worker (chaos_worker.py) for the durable-requests test (test_durable.py): the same CIPW02 worker, whose
log lines also name the request a handle job belongs to.

A worker sees only a job id, the key and the attempt; the test puts a reference to the request (or to the key) into
the intent's parameters (`{"intent": {"type": "Chaos", "parameters": {"ref": "..."}}}`), and every log line carries
it as "ref" (read from the JOB body; "?" if the body has none). Everything else -- registration, heartbeats,
reconnection when the broker goes silent or sends DISCONNECT (which is how it survives broker restarts), O_APPEND
writes with fsync before the handler starts -- is chaos_worker.py's.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import chaos_worker  # noqa: E402


def reference(body: bytes) -> str:
    try:
        ref = json.loads(body)["intent"]["parameters"]["ref"]
    except (ValueError, KeyError, TypeError):
        return "?"
    return ref if isinstance(ref, str) else "?"


class Log(chaos_worker.Log):
    def write(self, event: str, job: dict, how: str | None = None) -> None:
        line = {"event": event, "key": job["key"].decode("utf-8", "replace"), "attempt": job["attempt"],
                "job": job["id"].hex(), "pid": os.getpid(), "worker": self.name, "t": time.monotonic(),
                "ref": reference(job["body"])}
        if how:
            line["how"] = how
        os.write(self.fd, (json.dumps(line) + "\n").encode())
        os.fsync(self.fd)


chaos_worker.Log = Log  # main() looks the class up when it starts

if __name__ == "__main__":
    chaos_worker.main()
