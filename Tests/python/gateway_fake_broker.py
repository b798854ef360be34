"""A stand-in for the broker's frontend that records what the gateway sends: it answers PING with PONG and every
REQUEST with a final REPLY at once, in the REQUEST's version (PROTOCOL.md 4.5, 4.7)."""

from __future__ import annotations

import json
import threading

import zmq


class FakeBroker:
    def __init__(self, endpoint: str):
        self.endpoint = endpoint
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.bind(endpoint)
        self.requests: list[list[bytes]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        poller = zmq.Poller()
        poller.register(self.socket, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(50):
                continue
            identity, *frames = self.socket.recv_multipart()
            version, command = frames[0], frames[1]
            if command == b"PING":
                self.socket.send_multipart([identity, version, b"PONG"])
            elif command == b"REQUEST":
                self.requests.append(frames)
                body = json.dumps({"intent": json.loads(frames[6])["intent"], "handle": {"code": "success"}})
                reply = [identity, version, b"REPLY", frames[2], b"final", b"handle", body.encode()]
                if version != b"CIPC01":
                    reply.append(b"")
                self.socket.send_multipart(reply)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.socket.close(linger=0)
        self.context.term()
