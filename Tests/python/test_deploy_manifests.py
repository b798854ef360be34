"""Deploy/kubernetes and Deploy/grafana: the manifests are valid Kubernetes (kubernetes-validate, strict), the KEDA
ScaledObjects use only KEDA's documented fields, probes point at ports the containers expose, the workers' grace
period covers their drain, every metric the dashboard and the autoscalers query is one Concierge serves, the
pod-deletion-cost sidecar's script PATCHes its pod (against stand-in API and metrics servers) only when the value
changes, and the workers' preStop hook drains a real pool.

Every check is a function that returns the problems it finds; test_checks_catch_mistakes breaks a copy of the
manifests on purpose, once per check, and expects that check to name the mistake.
"""

from __future__ import annotations

import copy
import http.server
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import jsonschema
import kubernetes_validate
import pytest
import yaml
import zmq

import cip
import cluster

REPO = Path(__file__).resolve().parents[2]
KUBE = REPO / "Deploy" / "kubernetes"
DASHBOARD = REPO / "Deploy" / "grafana" / "concierge.json"

# The Kubernetes version the manifests are validated against (kubernetes-validate ships its schemas; strict: no
# unknown fields). 1.30: pod-deletion-cost (beta, on since 1.22) and every field used here are in it.
KUBERNETES_VERSION = "1.30"

# Every metric Concierge serves on /metrics (broker, then pool), with its type: the one list the dashboard, the
# ScaledObject, the HPA's adapter rules (and later a live broker's /metrics) are checked against.
METRICS: dict[str, str] = {
    # broker (concierge broker --http)
    "concierge_requests_total": "counter",  # {intent,phase,outcome}
    "concierge_queue_depth": "gauge",  # {intent}
    "concierge_queue_oldest_age_seconds": "gauge",  # {intent}
    "concierge_requests_in_flight": "gauge",
    "concierge_requests_queued": "gauge",
    "concierge_workers": "gauge",  # {state}: ready, draining, blocked
    "concierge_worker_capacity": "gauge",  # {state}: used, free
    "concierge_worker_jobs_in_progress": "gauge",  # {worker}
    "concierge_worker_slots": "gauge",  # {worker}
    "concierge_first_reply_duration_seconds": "histogram",
    "concierge_final_reply_duration_seconds": "histogram",
    "concierge_progress_replies_total": "counter",
    "concierge_busy_total": "counter",
    "concierge_timeouts_total": "counter",
    "concierge_worker_lost_total": "counter",
    "concierge_redispatches_total": "counter",
    "concierge_requests_quarantined_total": "counter",  # ended worker-crashed (PROTOCOL.md 6.7)
    "concierge_journal_commit_duration_seconds": "histogram",
    "concierge_journal_available": "gauge",
    "concierge_worker_jobs_total": "counter",  # {worker,intent,phase,outcome}, from the workers' results
    "concierge_handler_duration_seconds": "histogram",  # {intent,phase}, as the workers measured it
    "concierge_conversations_started_total": "counter",  # {intent}
    "concierge_conversations_ended_total": "counter",  # {intent,ending}
    "concierge_conversation_asks_total": "counter",  # {intent,parameter}
    "concierge_conversation_turns": "histogram",  # {intent}: turns per ended conversation
    "concierge_conversations_open": "gauge",
    # pool (concierge pool --http)
    "concierge_pool_workers": "gauge",  # {state}: wanted, running
    "concierge_pool_restarts_total": "counter",
    "concierge_pool_jobs_in_progress": "gauge",
}

# What the dashboard must show (request rate by outcome, queue depth and oldest age, in flight, workers by
# state, capacity used, first/final reply quantiles, busy/timeouts/worker-lost, journal commit p99 and availability,
# pool workers).
DASHBOARD_MUST_SHOW = {
    "concierge_requests_total", "concierge_queue_depth", "concierge_queue_oldest_age_seconds",
    "concierge_requests_in_flight", "concierge_workers", "concierge_worker_capacity",
    "concierge_first_reply_duration_seconds", "concierge_final_reply_duration_seconds", "concierge_busy_total",
    "concierge_timeouts_total", "concierge_worker_lost_total", "concierge_journal_commit_duration_seconds",
    "concierge_journal_available", "concierge_pool_workers",
}

# Files under Deploy/kubernetes that no kustomization includes, on purpose.
STANDALONE = {"hpa/prometheus-adapter-config.yaml"}

# The layouts a user applies with kubectl apply -k.
LAYOUTS = ["", "overlays/standby-hpa"]

POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


# -- loading ---------------------------------------------------------------------------------------------------------

def yaml_files() -> list[Path]:
    return sorted(p for p in KUBE.rglob("*.yaml") if p.name != "kustomization.yaml")


def kustomizations() -> list[Path]:
    return sorted(KUBE.rglob("kustomization.yaml"))


def load_all(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def patch_files() -> set[Path]:
    """Files kustomizations use as patches: partial resources, validated once rendered (test_layouts_render)."""
    out = set()
    for k in kustomizations():
        for patch in yaml.safe_load(k.read_text()).get("patches", []):
            if "path" in patch:
                out.add((k.parent / patch["path"]).resolve())
    return out


def resources() -> list[tuple[str, dict]]:
    """(file, document) for every whole resource under Deploy/kubernetes (not patches, not kustomizations)."""
    patches = patch_files()
    return [(str(p.relative_to(KUBE)), doc) for p in yaml_files() if p.resolve() not in patches
            for doc in load_all(p)]


def pod_templates(docs: list[dict]) -> Iterator[tuple[str, dict]]:
    for doc in docs:
        if doc.get("kind") in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            yield f"{doc['kind']}/{doc['metadata']['name']}", doc["spec"]["template"]["spec"]


# -- checks: each returns the problems it finds ----------------------------------------------------------------------

def check_kubernetes(docs: list[tuple[str, dict]]) -> list[str]:
    """Core resources against Kubernetes' own schemas, strict (an unknown or misspelt field fails)."""
    problems = []
    for where, doc in docs:
        if doc.get("apiVersion", "").startswith("keda.sh/"):
            continue  # check_keda
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            problems.append(f"{where}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}: "
                            f"{'.'.join(map(str, e.absolute_path))}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError as e:
            problems.append(f"{where}: {e.message}")
    return problems


def _closed(properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_STRING = {"type": "string"}
_INT = {"type": "integer"}
_BOOL_TEXT = {"type": "string", "enum": ["true", "false"]}
_NUMBER_TEXT = {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?$"}

# KEDA's ScaledObject (keda.sh/v1alpha1) as its documentation describes it (reference/scaledobject-spec, KEDA 2.15+;
# scalers/prometheus for the trigger's metadata). Every object is closed, so a misspelt field fails; trigger
# metadata values are strings (a map[string]string in KEDA), so an unquoted threshold fails too.
PROMETHEUS_METADATA = _closed({
    "serverAddress": {"type": "string", "pattern": "^https?://"},
    "query": _STRING,
    "threshold": _NUMBER_TEXT,
    "activationThreshold": _NUMBER_TEXT,
    "queryParameters": _STRING,
    "namespace": _STRING,
    "customHeaders": _STRING,
    "ignoreNullValues": _BOOL_TEXT,
    "unsafeSsl": _BOOL_TEXT,
    "authModes": _STRING,
}, ("serverAddress", "query", "threshold"))

KEDA_SCALEDOBJECT_SCHEMA = _closed({
    "apiVersion": {"const": "keda.sh/v1alpha1"},
    "kind": {"const": "ScaledObject"},
    "metadata": _closed({
        "name": _STRING, "namespace": _STRING,
        "labels": {"type": "object", "additionalProperties": _STRING},
        "annotations": {"type": "object", "additionalProperties": _STRING},
    }, ("name",)),
    "spec": _closed({
        "scaleTargetRef": _closed({
            "apiVersion": _STRING, "kind": _STRING, "name": _STRING, "envSourceContainerName": _STRING,
        }, ("name",)),
        "pollingInterval": {"type": "integer", "minimum": 1},
        "cooldownPeriod": {"type": "integer", "minimum": 0},
        "initialCooldownPeriod": {"type": "integer", "minimum": 0},
        "idleReplicaCount": {"type": "integer", "minimum": 0},
        "minReplicaCount": {"type": "integer", "minimum": 0},
        "maxReplicaCount": {"type": "integer", "minimum": 1},
        "fallback": _closed({"failureThreshold": _INT, "replicas": _INT}, ("failureThreshold", "replicas")),
        "advanced": _closed({
            "restoreToOriginalReplicaCount": {"type": "boolean"},
            "horizontalPodAutoscalerConfig": _closed({
                "name": _STRING,
                "behavior": {"type": "object"},  # an HPA's behavior: checked with Kubernetes' schema (check_keda)
            }),
            "scalingModifiers": _closed({
                "target": _STRING, "activationTarget": _STRING,
                "metricType": {"enum": ["AverageValue", "Value"]}, "formula": _STRING,
            }, ("target", "formula")),
        }),
        "triggers": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "type": _STRING,
                    "name": _STRING,
                    "metadata": {"type": "object", "additionalProperties": _STRING},
                    "useCachedMetrics": {"type": "boolean"},
                    "authenticationRef": _closed({"name": _STRING, "kind": _STRING}, ("name",)),
                    "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                },
                "required": ["type", "metadata"],
                "additionalProperties": False,
                "if": {"properties": {"type": {"const": "prometheus"}}},
                "then": {"properties": {"metadata": PROMETHEUS_METADATA}},
            },
        },
    }, ("scaleTargetRef", "triggers")),
}, ("apiVersion", "kind", "metadata", "spec"))


def check_keda(docs: list[tuple[str, dict]]) -> list[str]:
    problems = []
    validator = jsonschema.Draft202012Validator(KEDA_SCALEDOBJECT_SCHEMA)
    found = 0
    for where, doc in docs:
        if not doc.get("apiVersion", "").startswith("keda.sh/"):
            continue
        found += 1
        for e in validator.iter_errors(doc):
            problems.append(f"{where}: {'.'.join(map(str, e.absolute_path))}: {e.message}")
        spec = doc.get("spec", {})
        lo, hi = spec.get("minReplicaCount", 0), spec.get("maxReplicaCount", 100)
        if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
            problems.append(f"{where}: minReplicaCount {lo} > maxReplicaCount {hi}")
        behavior = spec.get("advanced", {}).get("horizontalPodAutoscalerConfig", {}).get("behavior")
        if behavior is not None:  # KEDA hands it to the HPA as is: Kubernetes' schema for it
            hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "x"},
                   "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "x"}, "maxReplicas": 1,
                            "behavior": behavior}}
            problems += [f"{where}: advanced.horizontalPodAutoscalerConfig.behavior: {p.split(': ', 2)[-1]}"
                         for p in check_kubernetes([(where, hpa)])]
    if found == 0:
        problems.append("no ScaledObject found")
    return problems


def _port_names(container: dict) -> dict[str, int]:
    return {p.get("name", str(p["containerPort"])): p["containerPort"] for p in container.get("ports", [])}


def check_probes(docs: list[dict]) -> list[str]:
    """Every HTTP probe names a port its container exposes, and that port is the one its --http serves."""
    problems = []
    templates = list(pod_templates(docs))
    for where, spec in templates:
        for c in spec.get("containers", []):
            ports = _port_names(c)
            args = c.get("args", []) + c.get("command", [])
            http = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--http"]
            for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
                probe = c.get(kind)
                if probe is None or "httpGet" not in probe:
                    continue
                port = probe["httpGet"]["port"]
                number = ports.get(port) if isinstance(port, str) else port
                if number is None or number not in ports.values():
                    problems.append(f"{where} {c['name']}: {kind} port {port!r} is not among its ports {ports}")
                    continue
                if not http or not http[0].endswith(f":{number}"):
                    problems.append(f"{where} {c['name']}: {kind} port {number} is not the --http port ({http})")
            if http and not any(k in c for k in ("livenessProbe", "readinessProbe")) and "concierge" in str(c):
                problems.append(f"{where} {c['name']}: serves --http but has no probe")
    if not templates:
        problems.append("no pod template found")
    return problems


def worker_drain_timeout() -> int:
    """The worker's drain timeout in seconds, from the source (WorkerConfiguration's default)."""
    source = (REPO / "Sources" / "IntentWorker" / "WorkerConfiguration.swift").read_text()
    seconds = set(re.findall(r"drainTimeout: Duration = \.seconds\((\d+)\)", source))
    assert len(seconds) == 1, f"WorkerConfiguration.drainTimeout default not found once: {seconds}"
    return int(seconds.pop())


def check_grace(docs: list[dict]) -> list[str]:
    """A worker pod's grace period covers its preStop drain (plus 10 s for the pool to exit), and the drain waits at
    least as long as a worker drains."""
    problems = []
    drain_timeout = worker_drain_timeout()
    seen = 0
    for where, spec in pod_templates(docs):
        grace = spec.get("terminationGracePeriodSeconds", 30)
        for c in spec.get("containers", []):
            pre_stop = c.get("lifecycle", {}).get("preStop")
            if pre_stop is None:
                continue
            seen += 1
            script = " ".join(pre_stop.get("exec", {}).get("command", []))
            m = re.search(r"DRAIN_SECONDS=(\d+)", script)
            if m is None:
                problems.append(f"{where} {c['name']}: preStop sets no DRAIN_SECONDS")
                continue
            drain = int(m.group(1))
            if drain < drain_timeout:
                problems.append(f"{where} {c['name']}: preStop waits {drain} s, less than a worker's drain timeout "
                                f"({drain_timeout} s)")
            if grace < drain + 10:
                problems.append(f"{where}: terminationGracePeriodSeconds {grace} < preStop drain {drain} s + 10 s")
    if seen == 0:
        problems.append("no container with a preStop hook")
    return problems


def metric_names(text: str) -> set[str]:
    """Concierge metric names in a PromQL text, histogram series (_bucket, _sum, _count) named by their histogram."""
    names = set()
    for name in re.findall(r"\bconcierge_[a-z0-9_]+", text):
        for suffix in ("_bucket", "_sum", "_count"):
            base = name.removesuffix(suffix)
            if base != name and METRICS.get(base) == "histogram":
                name = base
                break
        names.add(name)
    return names


def dashboard_queries(dashboard: dict) -> list[str]:
    out = []

    def walk(panels: list[dict]) -> None:
        for p in panels:
            out.extend(t["expr"] for t in p.get("targets", []) if "expr" in t)
            walk(p.get("panels", []))

    walk(dashboard.get("panels", []))
    return out


def check_dashboard(dashboard: dict) -> list[str]:
    problems = []
    queries = dashboard_queries(dashboard)
    used = set().union(*(metric_names(q) for q in queries)) if queries else set()
    problems += [f"dashboard: unknown metric {m}" for m in sorted(used - METRICS.keys())]
    problems += [f"dashboard: no panel shows {m}" for m in sorted(DASHBOARD_MUST_SHOW - used)]
    for q in queries:
        if "histogram_quantile" in q and "_bucket" not in q:
            problems.append(f"dashboard: histogram_quantile without _bucket series: {q}")
        if q.count("(") != q.count(")"):
            problems.append(f"dashboard: unbalanced parentheses: {q}")
    panels = dashboard.get("panels", [])
    ids = [p["id"] for p in panels]
    if len(ids) != len(set(ids)):
        problems.append("dashboard: duplicate panel ids")
    cells: dict[tuple[int, int], str] = {}  # the 24-column grid: no two panels on one cell
    for p in panels:
        g = p["gridPos"]
        if g["x"] + g["w"] > 24:
            problems.append(f"dashboard: panel {p['title']!r} is wider than the grid")
        for cell in ((x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])):
            if cell in cells:
                problems.append(f"dashboard: panels {cells[cell]!r} and {p['title']!r} overlap")
                break
            cells[cell] = p["title"]
    return problems


def check_autoscaler_queries(docs: list[tuple[str, dict]]) -> list[str]:
    """The ScaledObject's and prometheus-adapter's queries name metrics Concierge serves, and the HPA's external
    metrics are the ones the adapter rules make."""
    problems = []
    adapter_names = set()
    hpa_names = set()
    for where, doc in docs:
        if doc.get("kind") == "ScaledObject":
            for t in doc["spec"].get("triggers", []):
                q = t.get("metadata", {}).get("query", "")
                problems += [f"{where}: trigger {t.get('name')}: unknown metric {m}"
                             for m in sorted(metric_names(q) - METRICS.keys())]
                if not metric_names(q):
                    problems.append(f"{where}: trigger {t.get('name')} queries no Concierge metric")
        elif doc.get("kind") == "ConfigMap" and doc["metadata"]["name"] == "prometheus-adapter":
            config = yaml.safe_load(doc["data"]["config.yaml"])
            for rule in config.get("externalRules", []):
                for key in ("seriesQuery", "metricsQuery"):
                    problems += [f"{where}: adapter rule {key}: unknown metric {m}"
                                 for m in sorted(metric_names(rule[key]) - METRICS.keys())]
                adapter_names.add(rule["name"]["as"])
        elif doc.get("kind") == "HorizontalPodAutoscaler":
            hpa_names |= {m["external"]["metric"]["name"] for m in doc["spec"]["metrics"] if m["type"] == "External"}
    problems += [f"HPA external metric {m} is made by no prometheus-adapter rule" for m in sorted(hpa_names -
                                                                                                   adapter_names)]
    return problems


def check_layout() -> list[str]:
    """Every file a kustomization names exists, and every manifest is in some kustomization (or standalone)."""
    problems = []
    named: set[Path] = set()
    for k in kustomizations():
        spec = yaml.safe_load(k.read_text())
        entries = list(spec.get("resources", [])) + list(spec.get("components", []))
        entries += [p["path"] for p in spec.get("patches", []) if "path" in p]
        for entry in entries:
            target = (k.parent / entry).resolve()
            if not target.exists():
                problems.append(f"{k.relative_to(KUBE)}: {entry} does not exist")
            elif target.is_dir() and not (target / "kustomization.yaml").exists():
                problems.append(f"{k.relative_to(KUBE)}: {entry} has no kustomization.yaml")
            named.add(target)
    for p in yaml_files():
        if str(p.relative_to(KUBE)) not in STANDALONE and p.resolve() not in named:
            problems.append(f"{p.relative_to(KUBE)} is in no kustomization")
    return problems


# -- the tests -------------------------------------------------------------------------------------------------------

def test_core_resources_validate_with_kubernetes_validate():
    docs = resources()
    kinds = {doc["kind"] for _, doc in docs}
    assert {"Namespace", "Service", "StatefulSet", "Deployment", "ConfigMap", "ServiceAccount", "Role",
            "RoleBinding", "NetworkPolicy", "HorizontalPodAutoscaler", "ScaledObject"} <= kinds, kinds
    assert check_kubernetes(docs) == []
    print(f"{len(docs)} documents in {len(yaml_files())} files, Kubernetes {KUBERNETES_VERSION} (strict)")


def test_scaledobject_uses_only_kedas_documented_fields():
    assert check_keda(resources()) == []


def test_probes_point_at_ports_the_containers_expose():
    assert check_probes([doc for _, doc in resources()]) == []


def test_grace_period_covers_the_prestop_drain():
    assert check_grace([doc for _, doc in resources()]) == []


def test_dashboard_is_json_and_uses_only_concierge_metrics():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["panels"]
    assert check_dashboard(dashboard) == []
    print(f"dashboard: {len(dashboard_queries(dashboard))} queries over "
          f"{len(set().union(*(metric_names(q) for q in dashboard_queries(dashboard))))} metrics")


def test_autoscalers_query_concierge_metrics():
    assert check_autoscaler_queries(resources()) == []


def test_every_manifest_is_in_a_layout():
    assert check_layout() == []


def test_manifests_use_flags_concierge_accepts():
    """Every --flag a concierge container passes is one `concierge SUBCOMMAND --help` lists (a renamed or missing
    flag would crash-loop the pods)."""
    problems = []
    checked = 0
    helps: dict[str, str] = {}
    for where, spec in pod_templates([doc for _, doc in resources()]):
        for c in spec.get("containers", []):
            if c.get("image") != "concierge" or not c.get("args"):
                continue
            subcommand, flags = c["args"][0], [a for a in c["args"][1:] if a.startswith("--")]
            if subcommand not in helps:
                out = subprocess.run([str(cluster.binary()), subcommand, "--help"], capture_output=True, text=True,
                                     timeout=30)
                helps[subcommand] = out.stdout + out.stderr
            accepted = set(re.findall(r"(--[a-z][a-z0-9-]*)", helps[subcommand]))
            problems += [f"{where} {c['name']}: concierge {subcommand} has no {f}" for f in flags if f not in accepted]
            checked += len(flags)
    assert checked > 0
    assert problems == [], problems


def _kubectl_kustomize() -> str | None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None
    out = subprocess.run([kubectl, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30)
    try:
        version = json.loads(out.stdout).get("kustomizeVersion", "")
    except json.JSONDecodeError:
        return None
    m = re.match(r"v(\d+)\.", version)
    return kubectl if m and int(m.group(1)) >= 4 else None  # components: kustomize 3.7+, in kubectl since 1.21


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_render_and_validate(layout, tmp_path):
    """kubectl kustomize renders each layout (with keys from make-keys.sh, in a copy), and the result passes every
    check: patches applied, Secrets' generated names referenced. Needs kubectl bundling kustomize v4 or later (Debian's
    kubernetes-client 1.20 does not: skipped then; the other tests check the files themselves)."""
    kubectl = _kubectl_kustomize()
    if kubectl is None:
        pytest.skip("no kubectl with kustomize v4 or later (the other tests check the files themselves)")
    copy_dir = tmp_path / "kubernetes"
    shutil.copytree(KUBE, copy_dir)
    env = dict(os.environ, CONCIERGE=str(cluster.binary()))
    subprocess.run([str(copy_dir / "keys" / "make-keys.sh")], check=True, env=env, timeout=60, capture_output=True)
    out = subprocess.run([kubectl, "kustomize", str(copy_dir / layout)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    named = [(f"{layout or 'default'} (rendered)", d) for d in docs]
    assert check_kubernetes(named) == []
    assert check_probes(docs) == []
    assert check_grace(docs) == []
    secrets = {d["metadata"]["name"] for d in docs if d["kind"] == "Secret"}
    for where, spec in pod_templates(docs):
        for volume in spec.get("volumes", []):
            if "secret" in volume:
                name = volume["secret"]["secretName"]
                assert name in secrets, f"{where}: volume {volume['name']} uses Secret {name}, not made: {secrets}"
    workers = next(d for d in docs if d["kind"] == "Deployment")
    assert "replicas" not in workers["spec"], "an autoscaler owns the workers' replicas"
    assert all(d["metadata"].get("namespace") == "concierge" for d in docs if d["kind"] != "Namespace")
    autoscalers = {d["kind"] for d in docs} & {"ScaledObject", "HorizontalPodAutoscaler"}
    assert len(autoscalers) == 1, autoscalers
    if "ScaledObject" in autoscalers:
        assert check_keda(named) == []
    brokers = next(d for d in docs if d["kind"] == "StatefulSet")
    pool = next(c for c in workers["spec"]["template"]["spec"]["containers"] if c["name"] == "pool")
    backend = next(e["value"] for e in pool["env"] if e["name"] == "CONCIERGE_BROKER").split(",")
    assert len(backend) == brokers["spec"]["replicas"], f"workers must know every broker: {backend}"
    print(f"{layout or 'default'}: {len(docs)} resources: {sorted(d['kind'] for d in docs)}")


def test_checks_catch_mistakes():
    """Each check, given a copy of the manifests with one deliberate mistake, names it."""
    docs = resources()

    def mutated(edit: Callable[[list[tuple[str, dict]]], None]) -> list[tuple[str, dict]]:
        out = copy.deepcopy(docs)
        edit(out)
        return out

    def doc(out, kind, name=None) -> dict:
        return next(d for _, d in out if d["kind"] == kind and (name is None or d["metadata"]["name"] == name))

    def pool(out) -> dict:
        return doc(out, "Deployment", "concierge-workers")["spec"]["template"]["spec"]["containers"][0]

    # kubernetes-validate: a misspelt field, a wrong type.
    bad = mutated(lambda o: doc(o, "Deployment")["spec"]["template"]["spec"].update(
        terminationGracePeriodSecond=45))
    assert any("terminationGracePeriodSecond" in p for p in check_kubernetes(bad))
    bad = mutated(lambda o: pool(o)["ports"][0].update(containerPort="9465"))
    assert any("containerPort" in p for p in check_kubernetes(bad))
    # KEDA: a misspelt field, an unquoted threshold, a misspelt trigger metadata key.
    bad = mutated(lambda o: doc(o, "ScaledObject")["spec"].update(cooldownPeriods=300))
    assert any("cooldownPeriods" in p for p in check_keda(bad))
    bad = mutated(lambda o: doc(o, "ScaledObject")["spec"]["triggers"][0]["metadata"].update(threshold=48))
    assert any("threshold" in p for p in check_keda(bad))
    bad = mutated(lambda o: doc(o, "ScaledObject")["spec"]["triggers"][0]["metadata"].update(
        serverAdress="http://x"))
    assert any("serverAdress" in p for p in check_keda(bad))
    bad = mutated(lambda o: doc(o, "ScaledObject")["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
                  ["scaleDown"].update(stabilisationWindowSeconds=300))
    assert any("stabilisationWindowSeconds" in p for p in check_keda(bad))
    # Probes: a port the container does not expose; a port other than --http's.
    bad = mutated(lambda o: pool(o)["readinessProbe"]["httpGet"].update(port="metrics"))
    assert any("readinessProbe port 'metrics'" in p for p in check_probes([d for _, d in bad]))
    bad = mutated(lambda o: pool(o)["ports"][0].update(containerPort=9999))
    assert any("is not the --http port" in p for p in check_probes([d for _, d in bad]))
    # Grace period shorter than the drain; a drain shorter than a worker's drain timeout.
    bad = mutated(lambda o: doc(o, "Deployment")["spec"]["template"]["spec"].update(terminationGracePeriodSeconds=30))
    assert any("terminationGracePeriodSeconds 30" in p for p in check_grace([d for _, d in bad]))

    def short_drain(o):
        command = pool(o)["lifecycle"]["preStop"]["exec"]["command"]
        command[-1] = command[-1].replace("DRAIN_SECONDS=30", "DRAIN_SECONDS=10")

    assert any("less than a worker's drain timeout" in p for p in check_grace([d for _, d in mutated(short_drain)]))
    # Dashboard: an unknown metric (a typo), a required metric no longer shown.
    dashboard = json.loads(DASHBOARD.read_text())
    broken = json.loads(json.dumps(dashboard).replace("concierge_requests_total", "concierge_request_total"))
    problems = check_dashboard(broken)
    assert "dashboard: unknown metric concierge_request_total" in problems, problems
    assert "dashboard: no panel shows concierge_requests_total" in problems, problems
    broken = copy.deepcopy(dashboard)
    broken["panels"][2]["gridPos"]["x"] = 4
    assert any("overlap" in p for p in check_dashboard(broken))
    # Autoscaler queries: a typo in the ScaledObject's query; an HPA metric no adapter rule makes.
    bad = mutated(lambda o: doc(o, "ScaledObject")["spec"]["triggers"][1]["metadata"].update(
        query="max(concierge_queue_oldest_age{namespace=\"concierge\"})"))
    assert any("unknown metric concierge_queue_oldest_age" in p for p in check_autoscaler_queries(bad))
    bad = mutated(lambda o: doc(o, "HorizontalPodAutoscaler")["spec"]["metrics"][0]["external"]["metric"].update(
        name="concierge_jobs_wantd"))
    assert any("concierge_jobs_wantd" in p for p in check_autoscaler_queries(bad))


# -- the pod-deletion-cost sidecar's script, for real ----------------------------------------------------------------

class _Recorder(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler):
        super().__init__(("127.0.0.1", 0), handler)
        self.lock = threading.Condition()
        self.requests: list[dict] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def record(self, entry: dict) -> None:
        with self.lock:
            self.requests.append(entry)
            self.lock.notify_all()

    def wait_for(self, predicate: Callable[[list[dict]], bool], timeout: float, what: str) -> None:
        with self.lock:
            if not self.lock.wait_for(lambda: predicate(self.requests), timeout):
                raise TimeoutError(f"{what} within {timeout} s; requests: {self.requests[-5:]}")

    def count(self, method: str | None = None) -> int:
        with self.lock:
            return sum(1 for r in self.requests if method is None or r["method"] == method)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()


class _ApiServer(_Recorder):
    """Stands in for the Kubernetes API server: GET and JSON-merge PATCH of one pod, with a bearer token."""

    def __init__(self, namespace: str, pod: str, annotations: dict[str, str], token: str):
        self.path_ok = f"/api/v1/namespaces/{namespace}/pods/{pod}"
        self.pod = {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": pod, "namespace": namespace, "annotations": dict(annotations)}}
        self.token = token
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, code: int, body: dict) -> None:
                data = json.dumps(body, separators=(",", ":")).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                entry = {"method": method, "path": self.path, "headers": dict(self.headers), "body": body}
                if self.headers.get("Authorization") != f"Bearer {api.token}":
                    self._answer(401, {"kind": "Status", "code": 401})
                elif self.path != api.path_ok:
                    self._answer(404, {"kind": "Status", "code": 404})
                elif method == "PATCH":
                    if self.headers.get("Content-Type") != "application/merge-patch+json":
                        self._answer(415, {"kind": "Status", "code": 415})
                    else:
                        patch = json.loads(body)
                        api.pod["metadata"]["annotations"].update(patch["metadata"]["annotations"])
                        self._answer(200, api.pod)
                else:
                    self._answer(200, api.pod)
                api.record(entry)  # after answering: a waiter sees the request once it is complete

            def do_GET(self):
                self._handle("GET")

            def do_PATCH(self):
                self._handle("PATCH")

        super().__init__(Handler)


class _MetricsServer(_Recorder):
    """Stands in for the pool's /metrics; the test sets the text (or an HTTP error) it serves."""

    def __init__(self):
        self.text = ""
        self.status = 200
        metrics = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                with metrics.lock:
                    status, text = metrics.status, metrics.text
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                metrics.record({"method": "GET", "path": self.path})

        super().__init__(Handler)

    def serve(self, jobs: str | None, status: int = 200) -> None:
        lines = ["# HELP concierge_pool_workers Worker processes.", "# TYPE concierge_pool_workers gauge",
                 'concierge_pool_workers{state="running"} 4', 'concierge_pool_workers{state="wanted"} 4']
        if jobs is not None:
            lines += ["# HELP concierge_pool_jobs_in_progress Jobs the workers run now.",
                      "# TYPE concierge_pool_jobs_in_progress gauge", f"concierge_pool_jobs_in_progress {jobs}"]
        with self.lock:
            self.text, self.status = "\n".join(lines) + "\n", status

    def scrapes_after(self, n: int, more: int, timeout: float = 20.0) -> None:
        """Waits until `more` scrapes followed the first n: the script has acted on every scrape up to n + more - 1
        (it scrapes again only after acting on the last one)."""
        self.wait_for(lambda r: len(r) >= n + more, timeout, f"{more} scrapes after the first {n}")


def _sidecar_script() -> str:
    config = next(d for _, d in resources() if d["kind"] == "ConfigMap"
                  and d["metadata"]["name"] == "concierge-pod-deletion-cost")
    return config["data"]["pod-deletion-cost.sh"]


def _self_signed(tmp: Path) -> ssl.SSLContext:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(tmp / "tls.key"),
                    "-out", str(tmp / "ca.crt")], check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp / "ca.crt", tmp / "tls.key")
    return context


def test_pod_deletion_cost_script_patches_its_pod_only_on_change(tmp_path):
    """The sidecar's script from the ConfigMap, run by dash (POSIX sh) with curl against a stand-in API server over
    TLS (its CA in the service-account directory, as in a pod) and a stand-in /metrics."""
    shell = shutil.which("dash") or "/bin/sh"
    assert shutil.which("curl"), "curl is needed (Scripts/setup installs it)"
    sa_dir = tmp_path / "serviceaccount"
    sa_dir.mkdir()
    tls = _self_signed(sa_dir)
    (sa_dir / "token").write_text("token-1")
    script = tmp_path / "pod-deletion-cost.sh"
    script.write_text(_sidecar_script())

    api = _ApiServer("concierge", "concierge-workers-abc12", {POD_DELETION_COST: "0", "other": "kept"}, "token-1")
    api.socket = tls.wrap_socket(api.socket, server_side=True)
    metrics = _MetricsServer()
    metrics.serve("0")
    with api, metrics:
        env = {"PATH": os.environ["PATH"], "POD_NAME": "concierge-workers-abc12", "POD_NAMESPACE": "concierge",
               "METRICS_URL": f"http://127.0.0.1:{metrics.port}/metrics", "INTERVAL": "0.05",
               "APISERVER": f"https://127.0.0.1:{api.port}", "SA_DIR": str(sa_dir)}
        log = open(tmp_path / "sidecar.log", "wb")
        proc = subprocess.Popen([shell, str(script)], env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            def patches() -> list[dict]:
                with api.lock:
                    return [r for r in api.requests if r["method"] == "PATCH"]

            def wait_patch(n: int) -> dict:
                api.wait_for(lambda r: sum(1 for x in r if x["method"] == "PATCH") >= n, 20, f"PATCH number {n}")
                return patches()[n - 1]

            def expect_cost(n: int, value: str, token: str = "token-1") -> None:
                patch = wait_patch(n)
                assert json.loads(patch["body"]) == {"metadata": {"annotations": {POD_DELETION_COST: value}}}
                assert patch["headers"]["Content-Type"] == "application/merge-patch+json"
                assert patch["headers"]["Authorization"] == f"Bearer {token}"
                assert patch["path"] == "/api/v1/namespaces/concierge/pods/concierge-workers-abc12"

            # It reads the pod first (GET): the pod already says 0 and the pool is idle, so nothing is sent.
            metrics.scrapes_after(0, 4)
            assert api.count("GET") == 1 and api.count("PATCH") == 0, api.requests
            # Busy: 3 jobs -> 4 (rounded up to a power of two).
            metrics.serve("3")
            expect_cost(1, "4")
            # Unchanged, and changed within the same power of two (4, and 4.0 as a float gauge): nothing sent.
            metrics.scrapes_after(metrics.count(), 3)
            metrics.serve("4.0")
            metrics.scrapes_after(metrics.count(), 3)
            assert len(patches()) == 1, patches()
            # Idle again -> 0.
            metrics.serve("0")
            expect_cost(2, "0")
            # /metrics failing, or without the metric: nothing sent, the script goes on.
            metrics.serve("9", status=500)
            metrics.scrapes_after(metrics.count(), 3)
            metrics.serve(None)
            metrics.scrapes_after(metrics.count(), 3)
            assert len(patches()) == 1 + 1, patches()
            assert proc.poll() is None, (tmp_path / "sidecar.log").read_text()
            # The kubelet rotated the token: the next PATCH uses the new one.
            (sa_dir / "token").write_text("token-2")
            api.token = "token-2"
            metrics.serve("17")
            expect_cost(3, "32", token="token-2")
            assert api.pod["metadata"]["annotations"] == {POD_DELETION_COST: "32", "other": "kept"}
            # It logs each change once the API server accepted it.
            end = time.monotonic() + 10
            while "pod-deletion-cost: 32" not in (tmp_path / "sidecar.log").read_text():
                assert time.monotonic() < end, (tmp_path / "sidecar.log").read_text()
                time.sleep(0.02)
            # SIGTERM (the pod stops): it exits at once, with status 0 (as PID 1 it would otherwise ignore it).
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == 0
            print(f"sidecar: {api.count('GET')} GET, {api.count('PATCH')} PATCH over {metrics.count()} scrapes; "
                  f"exit {time.monotonic() - started:.2f} s after SIGTERM")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
            log.close()
        output = (tmp_path / "sidecar.log").read_text().splitlines()
        changes = [line for line in output if re.fullmatch(r"pod-deletion-cost: -?\d+", line)]
        assert changes == ["pod-deletion-cost: 4", "pod-deletion-cost: 0", "pod-deletion-cost: 32"], output


def test_pod_deletion_cost_script_sets_a_pod_without_cost(tmp_path):
    """A pod with no annotation yet (a new pod, or the GET failing) gets one at the first look, even 0."""
    sa_dir = tmp_path / "sa"
    sa_dir.mkdir()
    tls = _self_signed(sa_dir)
    (sa_dir / "token").write_text("t")
    script = tmp_path / "pod-deletion-cost.sh"
    script.write_text(_sidecar_script())
    api = _ApiServer("ns", "pod", {}, "t")
    api.socket = tls.wrap_socket(api.socket, server_side=True)
    metrics = _MetricsServer()
    metrics.serve("0")
    with api, metrics:
        env = {"PATH": os.environ["PATH"], "POD_NAME": "pod", "POD_NAMESPACE": "ns", "INTERVAL": "0.05",
               "METRICS_URL": f"http://127.0.0.1:{metrics.port}/metrics",
               "APISERVER": f"https://127.0.0.1:{api.port}", "SA_DIR": str(sa_dir)}
        proc = subprocess.Popen([shutil.which("dash") or "/bin/sh", str(script)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            api.wait_for(lambda r: any(x["method"] == "PATCH" for x in r), 20, "a PATCH")
            metrics.scrapes_after(metrics.count(), 3)
            assert api.count("PATCH") == 1
            assert api.pod["metadata"]["annotations"] == {POD_DELETION_COST: "0"}
        finally:
            proc.send_signal(signal.SIGTERM)
            if proc.wait(10) is None:
                os.killpg(proc.pid, signal.SIGKILL)


# -- the workers' preStop hook, on a real pool -----------------------------------------------------------------------

def _live_children(pid: int) -> list[int]:
    """The processes whose parent is pid and that have not exited (zombies excluded), from /proc."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid) and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def test_prestop_drains_a_real_pool_before_sigterm(run_dir):
    """The preStop command from the Deployment, run as the kubelet would (sh -c, the container's environment),
    against a real broker and pool: the running job finishes (final, not worker-lost), every worker leaves, and the
    hook returns then (not before), well within the grace period; the pool itself is still up for the SIGTERM that
    follows, and then exits at once."""
    workers = next(d for _, d in resources() if d["kind"] == "Deployment")
    spec = workers["spec"]["template"]["spec"]
    pool_container = next(c for c in spec["containers"] if c["name"] == "pool")
    command = pool_container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[:2] == ["/bin/sh", "-c"], command

    broker = cluster.Broker("k8s-broker", run_dir, {})
    pool = None
    try:
        broker.wait_ready()
        pool = cluster.start_pool(broker, run_dir, "k8s-pool", workers=2)
        cluster.wait_for_workers(broker, 2, procs=[pool])
        with broker.client() as client:
            # A 2.5 s job with a 300 ms deadline: the progress reply says it is running at a worker.
            rid = client.request("Echo", "handle", cip.interaction("Echo", text="slow", delayMs=2500), deadline=300)
            assert client.reply(rid, timeout=10).status == "progress"
            assert _live_children(pool.pid), "the pool runs no worker"
            # POOL_PID: the pool is PID 1 in its container, not here.
            env = dict(os.environ, CONCIERGE_POOL_CONTROL=f"ipc://{run_dir}/k8s-pool.ctl", POOL_PID=str(pool.pid),
                       PATH=f"{cluster.binary().parent}:{os.environ['PATH']}")
            started = time.monotonic()
            hook = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
            took = time.monotonic() - started
            assert hook.returncode == 0, hook.stdout + hook.stderr
            # It returned once the workers had exited: the one with the job only after finishing it.
            assert _live_children(pool.pid) == [], "preStop returned while workers still ran"
            final = client.reply(rid, timeout=10)
            assert final.status == "final", final  # drained: the job finished, it was not cut short
        status = cluster.pool_status(run_dir, "k8s-pool")
        assert '"workers":{}' in status, status
        assert pool.alive(), pool.tail()
        grace = spec["terminationGracePeriodSeconds"]
        assert took < grace, f"preStop took {took:.1f} s, grace period {grace} s"
        print(f"preStop: returned {took:.2f} s after it started, with a job of 2.5 s running (grace {grace} s)")
        pool.signal(signal.SIGTERM)
        assert pool.wait(10) == 0, pool.tail()
    finally:
        if pool is not None:
            pool.stop()
        broker.stop()


# -- the brokers' journal-init containers, for real ------------------------------------------------------------------

def _init_command(layout: str) -> list[str]:
    docs = [doc for _, doc in resources()]
    broker = next(d for d in docs if d["kind"] == "StatefulSet" and d["spec"]["replicas"] == (1 if layout == "sqlite"
                                                                                              else 2))
    return broker["spec"]["template"]["spec"]["initContainers"][0]["command"]


def test_sqlite_journal_init_creates_the_journal_once(tmp_path):
    """The init container's command makes the journal on a new volume and leaves an existing one alone."""
    command = _init_command("sqlite")
    script = command[-1].replace("/var/lib/concierge/journal", str(tmp_path))
    env = dict(os.environ, PATH=f"{cluster.binary().parent}:{os.environ['PATH']}")
    first = subprocess.run([*command[:-1], script], env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0 and (tmp_path / "journal.sqlite").is_file(), first.stderr
    before = (tmp_path / "journal.sqlite").stat()
    again = subprocess.run([*command[:-1], script], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "journal.sqlite").stat().st_mtime_ns == before.st_mtime_ns  # not touched
    check = subprocess.run([str(cluster.binary()), "journal", "check", str(tmp_path / "journal.sqlite")],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.needs_trait("PostgreSQL")
def test_postgres_journal_init_tolerates_an_existing_journal():
    """Both standby brokers' init containers run it: the first creates the tables, the second (and any restart)
    finds them and succeeds; an unreachable database fails the container (the pod waits and retries)."""
    import failover_net

    command = _init_command("standby")
    env = dict(os.environ, PATH=f"{cluster.binary().parent}:{os.environ['PATH']}")
    pg = failover_net.Postgres(["127.0.0.1"], [])
    try:
        env["CONCIERGE_JOURNAL"] = pg.url("127.0.0.1")
        for attempt in ("creates", "finds"):
            out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, f"{attempt}: {out.stdout}{out.stderr}"
        tables = pg.sql("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
        assert int(tables) > 0, "no journal tables were created"
        env["CONCIERGE_JOURNAL"] = f"postgres://concierge@127.0.0.1:{failover_net.free_port()}/concierge"
        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and "journal-unavailable" in out.stderr, out.stdout + out.stderr
    finally:
        pg.close()


# -- the metric list and the probes' paths against live processes ----------------------------------------------------

POOL_ONLY = {name for name in METRICS if name.startswith("concierge_pool_")}


def _http_port(proc: cluster.Proc, timeout: float = 20.0) -> int:
    """The port of `--http 127.0.0.1:0`, from the process's `http ready` log line."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = re.search(r"http=127\.0\.0\.1:(\d+).*http ready", proc.log_path.read_text("utf-8", "replace"))
        if m:
            return int(m.group(1))
        assert proc.alive(), proc.tail()
        time.sleep(0.05)  # polling the log for the line: bounded by `end`
    raise TimeoutError(f"no `http ready` line within {timeout} s:\n{proc.tail()}")


def _get(port: int, path: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _served(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        if line.startswith("concierge_"):
            names |= metric_names(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


def _probe_paths() -> set[str]:
    return {c[kind]["httpGet"]["path"] for _, spec in pod_templates([d for _, d in resources()])
            for c in spec["containers"] for kind in ("livenessProbe", "readinessProbe") if kind in c}


def test_metric_list_and_probe_paths_match_a_live_broker(run_dir, tmp_path):
    """A broker with a journal and --http: the probes' paths answer (/readyz only once a worker registered), and
    after some requests its /metrics serves every broker metric of METRICS and nothing outside it."""
    journal = tmp_path / "journal.sqlite"
    subprocess.run([str(cluster.binary()), "journal", "init", str(journal)], check=True, capture_output=True,
                   timeout=60)
    broker = cluster.Broker("k8s-metrics", run_dir, {"journal": journal, "http": "127.0.0.1:0", "log-level": "info"})
    pool = None
    try:
        broker.wait_ready()
        port = _http_port(broker.proc)
        assert _get(port, "/livez")[0] == 200
        assert _get(port, "/readyz")[0] == 503, "ready without a worker"
        pool = cluster.start_pool(broker, run_dir, "k8s-metrics-pool", workers=1)
        cluster.wait_for_workers(broker, 1, procs=[pool])
        with broker.client() as c:
            assert c.run("Echo", "handle", cip.interaction("Echo", text="x")).status == "final"
            assert c.run("NoSuchIntent", "handle", {}).status == "error"
        # A conversation that asks once and completes: its counters and its histogram are served too.
        with zmq.Context() as context, context.socket(zmq.DEALER) as sock:
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(broker.frontend)
            intent = {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}
            for turn, body in [(1, {"intent": intent}), (2, {"parameter": "recipient", "option": 0})]:
                sock.send_multipart([b"CIPC03", b"TURN", b"t%d" % turn, b"k8s", str(turn).encode(), b"",
                                     json.dumps(body).encode(), b""])
                reply = [b""] * 4
                while reply[3] in (b"", b"progress"):
                    assert sock.poll(20_000), "no answer to a conversation turn"
                    reply = sock.recv_multipart()
                assert reply[3] == b"final", reply
        end = time.monotonic() + 20
        while _get(port, "/readyz")[0] != 200:  # the snapshot is published about once a second
            assert time.monotonic() < end, "not ready with a worker registered"
            time.sleep(0.1)
        for path in _probe_paths():
            assert _get(port, path)[0] == 200, path
        status, text = _get(port, "/metrics")
        assert status == 200
        served = _served(text)
        assert served - METRICS.keys() == set(), f"served but not in METRICS: {served - METRICS.keys()}"
        missing = METRICS.keys() - POOL_ONLY - served
        assert missing == set(), f"in METRICS but not served by the broker: {missing}"
        print(f"broker /metrics: {len(served)} metrics, as listed")
    finally:
        if pool is not None:
            pool.stop()
        broker.stop()


def test_metric_list_and_probe_paths_match_a_live_pool(run_dir):
    """A pool with --http: the probes' paths answer and /metrics serves the pool's metrics of METRICS (and nothing
    outside it)."""
    broker = cluster.Broker("k8s-pool-metrics", run_dir, {})
    pool = None
    try:
        broker.wait_ready()
        args = [str(cluster.binary()), "pool", "--broker", broker.backend, "--workers", "1", "--control",
                f"ipc://{run_dir}/k8s-pool-metrics.ctl", "--http", "127.0.0.1:0", "--log-level", "info"]
        pool = cluster.Proc("k8s-pool-metrics-pool", args, run_dir)
        port = _http_port(pool)
        cluster.wait_for_workers(broker, 1, procs=[pool])
        end = time.monotonic() + 20
        while _get(port, "/readyz")[0] != 200:
            assert time.monotonic() < end, "the pool is not ready with its worker running"
            time.sleep(0.1)
        for path in _probe_paths():
            assert _get(port, path)[0] == 200, path
        served = _served(_get(port, "/metrics")[1])
        assert served - METRICS.keys() == set(), f"served but not in METRICS: {served - METRICS.keys()}"
        missing = POOL_ONLY - served
        assert missing == set(), f"in METRICS but not served by the pool: {missing}"
    finally:
        if pool is not None:
            pool.stop()
        broker.stop()
