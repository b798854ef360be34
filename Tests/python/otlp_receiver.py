"""A minimal OTLP/HTTP trace receiver for tests, built from the OpenTelemetry protocol definitions
(opentelemetry-proto's ExportTraceServiceRequest).

It listens on 127.0.0.1 on an ephemeral port, accepts `POST /v1/traces` with `application/x-protobuf` bodies (gzip
allowed), and keeps every span it receives. Tests point a process at it with `env()` (the standard `OTEL_*`
variables Swift OTel reads) and wait for spans with `wait_for()`, which polls with a bounded timeout.

    with OTLPReceiver() as receiver:
        start_broker(env=receiver.env("concierge-broker"))
        spans = receiver.wait_for(lambda spans: any(s.name == "concierge.request" for s in spans))
"""

from __future__ import annotations

import gzip
import http.server
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

# Span kinds of the protocol (opentelemetry.proto.trace.v1.Span.SpanKind).
KIND_NAMES = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


@dataclass
class Span:
    """One received span, its ids as lowercase hex (as in a traceparent)."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: str
    service: str
    attributes: dict = field(default_factory=dict)
    events: list = field(default_factory=list)  # [(name, {attributes})]
    links: list = field(default_factory=list)  # [(trace_id, span_id, {attributes})]
    status_code: int = 0
    start_ns: int = 0
    end_ns: int = 0

    def __repr__(self) -> str:
        return (
            f"Span({self.name!r} {self.kind} service={self.service} trace={self.trace_id} span={self.span_id} "
            f"parent={self.parent_span_id or '-'} attributes={self.attributes})"
        )


def _value(any_value) -> object:
    """An AnyValue as a Python value."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(any_value, kind)
    if kind == "array_value":
        return [_value(v) for v in value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.values}
    return value


def _attributes(key_values) -> dict:
    return {kv.key: _value(kv.value) for kv in key_values}


class OTLPReceiver:
    """An OTLP/HTTP (protobuf) trace receiver on 127.0.0.1, in a thread of this process."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._spans: list[Span] = []
        self.requests = 0
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (the base class's name)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.headers.get("Content-Encoding", "").lower() == "gzip":
                    body = gzip.decompress(body)
                if self.path.rstrip("/") != "/v1/traces":
                    self._answer(404, b"")
                    return
                request = ExportTraceServiceRequest()
                try:
                    request.ParseFromString(body)
                except Exception:  # a body that is not the message: the exporter's fault
                    self._answer(400, b"")
                    return
                receiver._add(request)
                self._answer(200, ExportTraceServiceResponse().SerializeToString())

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def endpoint(self) -> str:
        """The OTLP/HTTP base endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`)."""
        return f"http://127.0.0.1:{self.port}"

    def env(self, service_name: str, schedule_delay_ms: int = 50) -> dict:
        """The `OTEL_*` variables that make a process export its spans here, in small batches at once."""
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": self.endpoint + "/v1/traces",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
            "OTEL_SERVICE_NAME": service_name,
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none",
            "OTEL_TRACES_SAMPLER": "parentbased_always_on",
            "OTEL_BSP_SCHEDULE_DELAY": str(schedule_delay_ms),
            "OTEL_BSP_EXPORT_TIMEOUT": "2000",
        }

    def _add(self, request: ExportTraceServiceRequest) -> None:
        spans: list[Span] = []
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            service = str(resource.get("service.name", ""))
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append(
                        Span(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_span_id=span.parent_span_id.hex(),
                            kind=KIND_NAMES.get(span.kind, str(span.kind)),
                            service=service,
                            attributes=_attributes(span.attributes),
                            events=[(event.name, _attributes(event.attributes)) for event in span.events],
                            links=[
                                (link.trace_id.hex(), link.span_id.hex(), _attributes(link.attributes))
                                for link in span.links
                            ],
                            status_code=span.status.code,
                            start_ns=span.start_time_unix_nano,
                            end_ns=span.end_time_unix_nano,
                        )
                    )
        with self._lock:
            self.requests += 1
            self._spans.extend(spans)
            self._lock.notify_all()

    def spans(self, trace_id: Optional[str] = None) -> list[Span]:
        """The spans received so far (of one trace when `trace_id` is given)."""
        with self._lock:
            return [s for s in self._spans if trace_id is None or s.trace_id == trace_id]

    def clear(self) -> None:
        with self._lock:
            self._spans.clear()

    def wait_for(
        self, condition: Callable[[list[Span]], bool], timeout: float = 15.0, trace_id: Optional[str] = None
    ) -> list[Span]:
        """Waits until `condition(spans)` holds (spans of `trace_id`, or all), at most `timeout` seconds; returns
        the spans. Raises AssertionError with what arrived when the time is up."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                spans = [s for s in self._spans if trace_id is None or s.trace_id == trace_id]
                if condition(spans):
                    return spans
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"spans not received within {timeout} s; got {spans}")
                self._lock.wait(min(left, 0.5))

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "OTLPReceiver":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
