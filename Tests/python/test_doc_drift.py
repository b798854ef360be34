"""Docs that cannot drift from the code (issue 47, point 4): what Docs/DESIGN.md, Schemas/PROTOCOL.md section 14 and
README.md state about the package and the broker's defaults, checked against the manifest and the binary.

* DESIGN.md, "Modules" (no Swift build needed: `swift package dump-package` when `swift` is on PATH, else the text
  of Package.swift; when both are there they must agree):
  - its table has one row per non-test target of Package.swift, no more, no fewer, each with the target's kind
    (`system library`, `library…`, `executable`, `build-tool plugin`);
  - its "Depends on" column names exactly the package's own targets that the target depends on (external packages
    are not checked), except the `concierge` row, which says "most of the above" and so may name fewer;
  - its paragraph of test targets names exactly the manifest's test targets;
  - its counts ("N libraries (two of them C system libraries), N executables, N plugin, and N test targets") are the
    manifest's: a library is a regular or a system-library target.
* PROTOCOL.md, section 14 (needs the binary: CONCIERGE_BIN, as every test here). The rule:
  - a row whose first column names `--options` in backticks gives their defaults, in that order, in its second
    column; every such option must be an option of `concierge broker --help` that shows a `(default: …)`, and its
    default must be the help's. A number with a unit (ms, s, h; bytes, KiB, MiB, GiB) or none is compared as a
    value: the n-th option takes the first quantity of its kind after the one the option before it took (an option
    in ms or seconds — `-ms` in its name, or `--result-ttl`, `--idempotency-ttl`, `--conversation-ttl` — a time; one
    with `memory` or `body` in its name, bytes; the others counts). A word default (`none`, `confirm`, an endpoint)
    must be in the column in backticks; any other default (a phrase) must be in it as written.
  - every option of `concierge broker --help` with a `(default: …)` is named in the table, except the logging
    options (`--log-level`, `--log-format`), which are not the protocol's.
* README.md: `ZMQ_ROUTER_HANDOVER` is said to be on only without a permissions file (the broker turns it off with
  one, BrokerSockets.handover), and that sentence says "without a permissions file" and that with one it is off.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import cluster

REPO = Path(__file__).resolve().parents[2]
DESIGN = REPO / "Docs" / "DESIGN.md"
PROTOCOL = REPO / "Schemas" / "PROTOCOL.md"
README = REPO / "README.md"
MANIFEST = REPO / "Package.swift"

# Package.swift's target kinds, as dump-package names them, from the text.
_TEXT_KINDS = {"target": "regular", "systemLibrary": "system", "executableTarget": "executable",
               "testTarget": "test", "plugin": "plugin"}


def targets_from_text() -> dict[str, dict]:
    """Package.swift's targets, parsed from its text: name -> {"type", "deps"} (deps: the package's own targets)."""
    text = MANIFEST.read_text()
    body = text[text.index("targets: [", text.index("dependencies: [")):]
    opening = r'\n\s*\.(target|systemLibrary|executableTarget|testTarget|plugin)\(\s*name:\s*"([^"]+)"'
    starts = [(m.start(), m.group(1), m.group(2)) for m in re.finditer(opening, body)]
    out = {}
    for i, (start, kind, name) in enumerate(starts):
        chunk = body[start:starts[i + 1][0] if i + 1 < len(starts) else len(body)]
        chunk = re.sub(r"//[^\n]*", "", chunk)
        deps: set[str] = set()
        m = re.search(r"dependencies:\s*\[", chunk)
        if m:
            depth, j = 1, m.end()
            while depth:
                depth += {"[": 1, "]": -1}.get(chunk[j], 0)
                j += 1
            listed = re.sub(r"\.product\([^)]*\)", "", chunk[m.end():j - 1])
            deps = set(re.findall(r'"([^"]+)"', listed))
        out[name] = {"type": _TEXT_KINDS[kind], "deps": deps}
    return out


def targets_from_dump() -> dict[str, dict] | None:
    """The same from `swift package dump-package` (offline; no build), or None without `swift`."""
    swift = shutil.which("swift")
    if swift is None:
        return None
    out = subprocess.run([swift, "package", "dump-package"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    result = {}
    for target in json.loads(out.stdout)["targets"]:
        deps = set()
        for dep in target["dependencies"]:
            (how, value), = dep.items()
            if how in ("byName", "target"):
                deps.add(value[0])
        result[target["name"]] = {"type": target["type"], "deps": deps}
    return result


@pytest.fixture(scope="module")
def manifest() -> dict[str, dict]:
    from_text = targets_from_text()
    dumped = targets_from_dump()
    if dumped is not None:
        assert from_text == dumped, "the text parse of Package.swift disagrees with dump-package"
        return dumped
    return from_text


def modules_section() -> str:
    text = DESIGN.read_text()
    return text[text.index("\n## Modules\n"):text.index("\n## Threads\n")]


def module_rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for m in re.finditer(r"^\| `([^`]+)` \|([^|]*)\|.*\|([^|]*)\|$", modules_section(), re.M):
        assert m.group(1) not in rows, f"DESIGN.md's module table lists {m.group(1)} twice"
        rows[m.group(1)] = (m.group(2).strip(), m.group(3).strip())
    return rows


_DOC_KIND = {"system": "system library", "regular": "library", "executable": "executable",
             "plugin": "build-tool plugin"}


def test_design_module_table_is_the_manifest(manifest):
    rows = module_rows()
    wanted = {name for name, t in manifest.items() if t["type"] != "test"}
    assert set(rows) == wanted, (f"in Package.swift, not in DESIGN.md's table: {sorted(wanted - set(rows))}; "
                                 f"in the table, not a (non-test) target: {sorted(set(rows) - wanted)}")
    for name, (kind, _) in rows.items():
        want = _DOC_KIND[manifest[name]["type"]]
        assert kind == want or (want == "library" and kind.startswith("library")), \
            f"DESIGN.md calls {name} a {kind!r}; Package.swift makes it a {manifest[name]['type']} target"


def test_design_depends_on_column_is_the_manifest(manifest):
    names = set(manifest)
    for name, (_, column) in module_rows().items():
        if name not in manifest:
            continue  # the table's own test says so
        named = {n for n in names if re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", column)}
        local = manifest[name]["deps"]
        if "most of the above" in column:
            assert named <= local, f"DESIGN.md: {name} depends on {sorted(named - local)}? Package.swift says not"
        else:
            assert named == local, (f"DESIGN.md's 'Depends on' for {name}: missing {sorted(local - named)}, "
                                    f"not in Package.swift {sorted(named - local)}")


def test_design_lists_the_test_targets(manifest):
    section = modules_section()
    paragraph = section[section.index("Test targets,"):]
    paragraph = re.split(r"\.\s", paragraph, maxsplit=1)[0]  # its first sentence
    listed = re.findall(r"`([^`]+)`", paragraph)
    assert len(listed) == len(set(listed)), "a test target is listed twice"
    wanted = {name for name, t in manifest.items() if t["type"] == "test"}
    assert set(listed) == wanted, (f"test targets not in DESIGN.md: {sorted(wanted - set(listed))}; "
                                   f"listed but not in Package.swift: {sorted(set(listed) - wanted)}")


_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


def test_design_counts_are_the_manifest(manifest):
    m = re.search(r"Every target of `Package.swift`: (\d+) libraries \((\w+) of them C system libraries\), (\d+) "
                  r"executables, (\d+) plugins?, and (\d+)\s+test targets", modules_section())
    assert m, "DESIGN.md's sentence with the target counts is not in the expected form"
    kinds = [t["type"] for t in manifest.values()]
    stated = (int(m.group(1)), _WORDS.get(m.group(2), m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
    actual = (kinds.count("regular") + kinds.count("system"), kinds.count("system"), kinds.count("executable"),
              kinds.count("plugin"), kinds.count("test"))
    assert stated == actual, f"DESIGN.md says (libraries, system, executables, plugins, tests) = {stated}, " \
                             f"Package.swift has {actual}"


# -- PROTOCOL.md section 14 against `concierge broker --help` ----------------------------------------------------

NOT_IN_TABLE = {"--log-level", "--log-format"}  # logging, not the protocol's defaults
SECONDS = {"--result-ttl", "--idempotency-ttl", "--conversation-ttl"}
TIME = {"ms": 1e-3, "s": 1, "h": 3600}
BYTES = {"bytes": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}


def broker_help_defaults() -> dict[str, str]:
    out = subprocess.run([str(cluster.binary()), "broker", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # Options start a line at two spaces; their help runs on until the next one.
    entries = re.split(r"\n  (?=-)", "\n" + out.stdout.split("OPTIONS:", 1)[1])
    defaults = {}
    for entry in entries:
        option = re.match(r"(?:-\w, )?(--[\w-]+)", entry.strip())
        found = re.search(r"\(default:\s*(.*?)\)\.?\s*$", " ".join(entry.split()))
        if option and found:
            defaults[option.group(1)] = found.group(1).rstrip(".")
    return defaults


def defaults_rows() -> list[tuple[list[str], str]]:
    text = PROTOCOL.read_text()
    section = text[text.index("\n## 14. Defaults\n"):text.index("\n## 15. ")]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("Setting", "---"):
            rows.append((re.findall(r"`(--[\w-]+)`", cells[0]), cells[1]))
    assert len(rows) > 20, "PROTOCOL.md section 14's table was not found"
    return rows


def quantities(cell: str) -> list[tuple[str, float]]:
    """The numbers of a cell in order, each ("time", seconds), ("bytes", bytes) or ("count", n); section numbers,
    ranges and percentages left out."""
    found = []
    for m in re.finditer(r"(?<![\w.§%])(\d{1,3}(?:[ ,]\d{3})+|\d+)(?![\d.%]|\.\.)(?:\s*(ms|s|h|bytes|KiB|MiB|GiB)\b)?",
                         cell):
        if re.search(r"(section|check)\s*$", cell[:m.start()]):
            continue
        value, unit = float(re.sub(r"[ ,]", "", m.group(1))), m.group(2)
        if unit in TIME:
            found.append(("time", value * TIME[unit]))
        elif unit in BYTES:
            found.append(("bytes", value * BYTES[unit]))
        else:
            found.append(("count", value))
    return found


def kind_of(option: str, default: str) -> tuple[str, float] | None:
    if not re.fullmatch(r"\d+", default):
        return None
    if option.endswith("-ms"):
        return "time", int(default) / 1000
    if option in SECONDS:
        return "time", float(default)
    if "memory" in option or "body" in option:
        return "bytes", float(default)
    return "count", float(default)


def test_protocol_defaults_are_the_brokers():
    defaults = broker_help_defaults()
    assert "--deadline-ms" in defaults and "--journal" in defaults, f"help not parsed: {defaults}"
    for options, cell in defaults_rows():
        left = quantities(cell)
        for option in options:
            assert option in defaults, f"PROTOCOL.md 14 names {option}, which `concierge broker --help` shows " \
                                       f"with no default"
            default = defaults[option]
            wanted = kind_of(option, default)
            if wanted is None:
                text = " ".join(cell.split())
                shown = f"`{default}`" if " " not in default else default
                assert shown in text, f"PROTOCOL.md 14: {option}'s default is {default!r} (--help), not in {cell!r}"
                continue
            same_kind = [i for i, q in enumerate(left) if q[0] == wanted[0]]
            assert same_kind, f"PROTOCOL.md 14: no {wanted[0]} for {option} (default {default}) in {cell!r}"
            got = left[same_kind[0]]
            assert abs(got[1] - wanted[1]) < 1e-9, \
                f"PROTOCOL.md 14 gives {option} {got[1]:g} ({got[0]}), --help {default} ({wanted[1]:g})"
            left = left[same_kind[0] + 1:]


def test_protocol_defaults_name_every_broker_default():
    named = {option for options, _ in defaults_rows() for option in options}
    missing = set(broker_help_defaults()) - named - NOT_IN_TABLE
    assert not missing, f"broker options with a default that PROTOCOL.md 14 does not name: {sorted(missing)}"


# -- README: ROUTER_HANDOVER ---------------------------------------------------------------------------------------


def test_readme_says_handover_is_off_with_permissions():
    source = (REPO / "Sources" / "IntentBroker" / "BrokerSockets.swift").read_text()
    assert "func handover(permissions: Bool) -> Int32 { permissions ? 0 : 1 }" in source, \
        "the broker's handover rule changed: check README's sentence about ZMQ_ROUTER_HANDOVER and update this test"
    text = " ".join(README.read_text().split())
    sentences = [s for s in re.split(r"(?<=\.)\s+(?=[A-Z*])", text) if "ZMQ_ROUTER_HANDOVER" in s]
    assert sentences, "README no longer mentions ZMQ_ROUTER_HANDOVER"
    for sentence in sentences:
        assert "without a permissions file" in sentence and re.search(r"with a permissions file[^.;]*\boff\b",
                                                                       sentence), \
            f"README presents ZMQ_ROUTER_HANDOVER without saying it is off with a permissions file: {sentence!r}"
