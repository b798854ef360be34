"""The gateway against its contract, Schemas/openapi.yaml: the document is valid OpenAPI 3.1, every route the
server answers is in it (and nothing else answers), and schemathesis, fuzzing a running gateway from the document,
finds no server error and no response that breaks it."""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest
import yaml
from openapi_spec_validator import validate

import cip
from gateway_procs import stack

DOCUMENT = cip.REPO / "Schemas" / "openapi.yaml"
ROUTES = cip.REPO / "Sources" / "ConciergeGateway" / "Gateway.swift"
METHODS = ("get", "head", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def document() -> dict:
    return yaml.safe_load(DOCUMENT.read_text())


@pytest.fixture(scope="module")
def gw(run_dir):
    with stack(run_dir, "gwc") as gateway:
        yield gateway


def documented(document: dict) -> set[tuple[str, str]]:
    return {(method, path) for path, item in document["paths"].items() for method in item if method in METHODS}


def test_the_document_is_valid_openapi_3_1(document):
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_every_route_in_the_source_is_documented(document):
    source = ROUTES.read_text()
    routes = {(method, re.sub(r":(\w+)", r"{\1}", path))
              for method, path in re.findall(r'router\.(get|head|post|delete)\("([^"]+)"\)', source)}
    assert routes, "no routes found in Gateway.swift"
    assert routes == documented(document)


def test_the_server_answers_documented_routes_only(document, gw):
    """Every method on every documented path (ids filled in): documented pairs reach their route; the others are
    405 with Allow; paths outside the document are 404."""
    pairs = documented(document)
    with httpx.Client(base_url=gw.url, timeout=10) as http:
        for path in {path for _, path in pairs}:
            concrete = path.replace("{id}", "probe-id")
            for method in METHODS:
                r = http.request(method.upper(), concrete, json={} if method in ("post", "put", "patch") else None)
                # HEAD answers carry no content (RFC 9110, 9.3.2): their status says it.
                problem = r.headers.get("content-type") == "application/problem+json" and method != "head"
                body = r.json() if problem else {}
                if method == "head":
                    assert r.content == b"", (path, r.content)
                    body = {"code": "method-not-allowed"} if r.status_code == 405 else {}
                if (method, path) in pairs:
                    assert body.get("code") not in ("not-found", "method-not-allowed"), (method, path, body)
                else:
                    assert r.status_code == 405 and body["code"] == "method-not-allowed", (method, path, r.text)
                    allowed = {m.lower() for m in r.headers["allow"].split(", ")}
                    assert allowed == {m for m, p in pairs if p == path}
        for path in ("/", "/v1", "/v1/requests/a/b", "/v1/conversations/a/answers", "/v2/requests", "/metrics/x"):
            r = http.get(path)
            assert r.status_code == 404 and r.json()["code"] == "not-found", (path, r.text)


def test_schemathesis_finds_no_server_error_and_no_contract_violation(gw, tmp_path):
    """Bounded: a few examples per operation and 20 s in all. `negative_data_rejection` is left out: it counts an
    unknown request header as invalid input, which HTTP servers must ignore (RFC 9110, 5.1); the bad input the
    gateway refuses is tested one by one in test_gateway.py."""
    checks = ("not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,"
              "response_schema_conformance,missing_required_header,unsupported_method,ignored_auth")
    out = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "run", str(DOCUMENT), "--url", gw.url, "--checks", checks,
         "--max-examples", "10", "--max-time", "20", "--workers", "1", "--report", "junit", "--report-dir",
         str(tmp_path), "--no-color"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    report = out.stdout + out.stderr
    assert "Failures:" not in report, report[-6000:]
    # Schemathesis' own generator may stumble on a schema (an internal error it reports as such); that is not the
    # server's doing, but anything else must pass.
    assert out.returncode == 0 or "Runtime Error" in report, report[-6000:]
    assert re.search(r"\d+ generated", report), report[-3000:]
