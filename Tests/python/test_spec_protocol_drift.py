"""Schemas/PROTOCOL.md against the Swift wire code, so that the spec cannot drift from it (issue 47, point 4).

Plain text: the test reads PROTOCOL.md and the sources of Sources/IntentWire with regular expressions; it builds
nothing and needs no broker binary.

(a) Versions. The signatures CIP.swift defines (`CIP.clientSignature...`, `CIP.workerSignature...`), the ones its
    `clientSignature(version:)`/`workerSignature(version:)` map versions to, and the ones the decoders'
    `version(ofSignature:)` accept are the same contiguous run from 01, each named for its version; the spec's
    header, section 3.1, the signature row of section 3.3, the sentence of section 9 and section 9's version table
    name exactly those.

(b) Frame tables. For every frame table of sections 4 and 5 (a table whose rows start `| F0 |`, `| F1 |`, ...), the
    command is its F1 and its direction the nearest "(client to broker" and the like before it (or, when only one
    decoder knows the command, that one). The F0 line must list exactly the signatures the decoder of that
    direction accepts for the command: all those of the protocol from the version that the `version >= N` guards
    around the command's `CIP.<Enum>.<command>.matches(command)` name. A JOB table of `CIP.Frames.jobV6` frames is
    the packed JOB (the branch of `decodeJob` under its own `version >= N`). An F0 that does not start with a
    signature names no list and must say "registered version": then the command must be accepted in every version,
    and the signatures the paragraph before the table names, if any, must be all of them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "Schemas" / "PROTOCOL.md"
WIRE = ROOT / "Sources" / "IntentWire"

SIGNATURE = re.compile(r"CIP[CW]\d\d")
RANGE = re.compile(r"`?(CIP[CW])(\d\d)`?\s+to\s+`?(CIP[CW])(\d\d)`?")


def read(name: str) -> str:
    return (WIRE / name).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- Swift sources


def braced_body(text: str, start_pattern: str) -> str:
    """The text between the braces of the first declaration matching `start_pattern` (a function, an enum)."""
    match = re.search(start_pattern, text)
    assert match, f"no {start_pattern!r} in the source"
    open_at = text.index("{", match.end())
    depth = 0
    for index in range(open_at, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:index]
    raise AssertionError(f"unbalanced braces after {start_pattern!r}")


def version_gate(body: str, position: int) -> int:
    """The least version at `position` of a function body: the largest `version >= N` on its own line or on the
    line of a brace that encloses it (1 when there is none)."""
    stack: list[int] = []  # for each open brace, the start of its line
    for index in range(position):
        char = body[index]
        if char == "{":
            stack.append(body.rfind("\n", 0, index) + 1)
        elif char == "}" and stack:
            stack.pop()
    line_start = body.rfind("\n", 0, position) + 1
    line_end = body.find("\n", position)
    lines = [body[line_start:line_end if line_end >= 0 else len(body)]]
    for start in stack:
        end = body.find("\n", start)
        lines.append(body[start:end if end >= 0 else len(body)])
    gates = [int(n) for line in lines for n in re.findall(r"\bversion\s*>=\s*(\d+)", line)]
    return max(gates, default=1)


def string_constants(body: str) -> dict[str, str]:
    """`public static let name: StaticString = "VALUE"` in a body: name -> VALUE."""
    return dict(re.findall(r'static let (\w+): StaticString = "([^"]*)"', body))


class Code:
    """What the Swift code says about versions and commands."""

    def __init__(self) -> None:
        cip = read("CIP.swift")
        self.cip = cip
        constants = string_constants(braced_body(cip, r"public enum CIP\b"))
        self.constants = {name: value for name, value in constants.items() if SIGNATURE.fullmatch(value)}
        self.commands = {
            enum: string_constants(braced_body(cip, rf"public enum {enum}\b"))
            for enum in ("Client", "Broker", "Worker")
        }
        self.frames = {
            name: int(value)
            for name, value in re.findall(r"static let (\w+) = (\d+)", braced_body(cip, r"public enum Frames\b"))
        }
        client_decoder = read("ClientMessageDecoder.swift")
        worker_decoder = read("WorkerMessageDecoder.swift")
        self.client_versions = self.accepted(client_decoder)
        self.worker_versions = self.accepted(worker_decoder)
        self.client_map = self.version_map(r"func clientSignature\(version: UInt8\)")
        self.worker_map = self.version_map(r"func workerSignature\(version: UInt8\)")
        # Direction -> (decoder function body, CIP enum of its command words).
        self.decoders = {
            ("client", "broker"): (braced_body(client_decoder, r"func decode\(_ frames: WireFrames\)"), "Client"),
            ("broker", "client"): (
                braced_body(read("BrokerReplyDecoder.swift"), r"func decode\(_ frames: WireFrames\)"), "Broker"),
            ("worker", "broker"): (braced_body(worker_decoder, r"func name\(of frame:"), "Worker"),
            ("broker", "worker"): (
                braced_body(read("BrokerMessageDecoder.swift"), r"func decode\(_ frames: WireFrames\)"), "Worker"),
        }
        decode_job = braced_body(read("BrokerMessageDecoder.swift"), r"func decodeJob\(")
        packed = decode_job.find("PackedJobHeader.decode")
        assert packed >= 0, "decodeJob no longer decodes a PackedJobHeader"
        self.packed_job_from = version_gate(decode_job, packed)
        assert self.packed_job_from > 1, "the packed JOB is no longer under a `version >= N` guard"

    def accepted(self, decoder: str) -> dict[int, str]:
        """version(ofSignature:): version -> the signature it accepts for it."""
        body = braced_body(decoder, r"func version\(ofSignature frame")
        found = re.findall(r"CIP\.(\w+)\.matches\(frame\)\s*\{\s*return (\d+)\s*\}", body)
        assert found, "version(ofSignature:) names no signature"
        return {int(version): self.constants[name] for name, version in found}

    def version_map(self, pattern: str) -> dict[int, str]:
        """clientSignature(version:) or workerSignature(version:): version -> signature (`default` is version 1)."""
        body = braced_body(self.cip, pattern)
        result = {int(v): self.constants[name] for v, name in re.findall(r"case (\d+): (\w+)", body)}
        default = re.search(r"default: (\w+)", body)
        assert default, f"{pattern} has no default"
        result[1] = self.constants[default.group(1)]
        return result

    def versions(self, protocol: str) -> dict[int, str]:
        return self.client_versions if protocol == "C" else self.worker_versions

    def directions_of(self, protocol: str, command: str) -> list[tuple[str, str]]:
        """The directions whose decoder of this protocol knows the command word."""
        found = []
        for direction, (body, enum) in self.decoders.items():
            if ("client" in direction) != (protocol == "C"):
                continue
            names = [name for name, word in self.commands[enum].items() if word == command]
            if any(re.search(rf"CIP\.{enum}\.{name}\.matches\(", body) for name in names):
                found.append(direction)
        return found

    def accepted_for(self, protocol: str, direction: tuple[str, str], command: str) -> set[str]:
        """The signatures the decoder of `direction` accepts `command` in."""
        body, enum = self.decoders[direction]
        names = [name for name, word in self.commands[enum].items() if word == command]
        positions = [m.start() for name in names for m in re.finditer(rf"CIP\.{enum}\.{name}\.matches\(", body)]
        assert positions, f"the {direction[0]}-to-{direction[1]} decoder does not know {command}"
        least = min(version_gate(body, position) for position in positions)
        return {sig for version, sig in self.versions(protocol).items() if version >= least}


@pytest.fixture(scope="module")
def code() -> Code:
    return Code()


@pytest.fixture(scope="module")
def spec() -> str:
    return SPEC.read_text(encoding="utf-8")


def signatures_in(text: str) -> set[str]:
    """The signatures a piece of spec text names: each one, and every one of a range "`CIPW01` to `CIPW06`"."""
    named = set(SIGNATURE.findall(text))
    for first, low, second, high in RANGE.findall(text):
        assert first == second, f"a range across protocols: {text!r}"
        named |= {f"{first}{n:02d}" for n in range(int(low), int(high) + 1)}
    return named


def of(protocol: str, names: set[str]) -> set[str]:
    return {name for name in names if name.startswith("CIP" + protocol)}


def section(spec: str, number: str) -> str:
    """The text of a numbered section (`## 9.` or `### 4.3`) up to the next heading of its level or above."""
    match = re.search(rf"^(#+) {re.escape(number)}[. ].*$", spec, re.MULTILINE)
    assert match, f"no section {number} in PROTOCOL.md"
    level = len(match.group(1))
    rest = spec[match.end():]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return spec[match.start():match.end() + (end.start() if end else len(rest))]


# ---------------------------------------------------------------------------------------------- (a) versions


def test_the_code_defines_one_contiguous_run_of_versions_per_protocol(code):
    for protocol, accepted, mapped in (("C", code.client_versions, code.client_map),
                                       ("W", code.worker_versions, code.worker_map)):
        defined = of(protocol, set(code.constants.values()))
        assert set(accepted.values()) == defined, f"CIP{protocol}: the decoder accepts {sorted(accepted.values())}, " \
                                                  f"CIP.swift defines {sorted(defined)}"
        assert mapped == accepted, f"CIP{protocol}: signature(version:) maps {mapped}, the decoder {accepted}"
        assert sorted(accepted) == list(range(1, len(accepted) + 1)), f"CIP{protocol}: versions {sorted(accepted)}"
        for version, signature in accepted.items():
            assert signature == f"CIP{protocol}{version:02d}", f"version {version} is named {signature}"


def test_the_version_table_of_section_9_is_the_code_s(code, spec):
    text = section(spec, "9")
    rows = re.findall(r"^\s*\|\s*`(CIP[CW]\d\d)`\s*\|", text, re.MULTILINE)
    assert rows, "section 9 has no version table"
    assert len(rows) == len(set(rows)), f"section 9 names a version twice: {rows}"
    expected = set(code.client_versions.values()) | set(code.worker_versions.values())
    assert set(rows) == expected, f"section 9's table: {sorted(rows)}; the code: {sorted(expected)}"
    assert rows == sorted(rows), "section 9's table is not in version order"
    defines = re.search(r"This document defines (.*?);", text, re.DOTALL)
    assert defines, "section 9 no longer says which versions the document defines"
    sentence = defines.group(1)
    assert signatures_in(sentence) == expected, f"section 9 defines {sorted(signatures_in(sentence))}"
    for protocol in ("C", "W"):
        n = len(code.versions(protocol))
        assert re.search(rf"versions 01 to {n:02d} \(`CIP{protocol}01` to `CIP{protocol}{n:02d}`\)", sentence), \
            f"section 9: CIP{protocol} versions are not said to be 01 to {n:02d}"


@pytest.mark.parametrize("where", ["header", "3.1", "3.3"])
def test_the_spec_states_the_code_s_versions_elsewhere(code, spec, where):
    if where == "header":
        line = re.search(r"^\* Versions:.*$", spec, re.MULTILINE)
        lines = [line.group(0)] if line else []
    elif where == "3.1":
        lines = re.findall(r"^\* CIP/(?:Client|Worker) \(signatures .*$", section(spec, "3.1"), re.MULTILINE)
    else:
        lines = re.findall(r"^\| signature \|.*$", section(spec, "3.3"), re.MULTILINE)
    assert lines, f"{where}: the line naming the versions is gone"
    named = set().union(*(signatures_in(line) for line in lines))
    expected = set(code.client_versions.values()) | set(code.worker_versions.values())
    assert named == expected, f"{where} names {sorted(named)}; the code speaks {sorted(expected)}"


# ---------------------------------------------------------------------------------------------- (b) frame tables


DIRECTION = re.compile(r"\((client|broker|worker) to (client|broker|worker)\b")


def frame_tables(spec: str):
    """Every frame table of sections 4 and 5: (section number, command, direction or None, F0 content, intro text,
    number of frame rows)."""
    lines = spec.splitlines()
    number = ""
    heading = ""
    intro: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        heading_match = re.match(r"^#+ (\d+(?:\.\d+)*)\.? (.*)$", line)
        if heading_match:
            number, heading, intro = heading_match.group(1), heading_match.group(2), []
            index += 1
            continue
        if not line.startswith("|"):
            intro.append(line)
            index += 1
            continue
        table = []
        while index < len(lines) and lines[index].startswith("|"):
            table.append([cell.strip() for cell in lines[index].strip().strip("|").split("|")])
            index += 1
        rows = {row[0]: row for row in table if re.fullmatch(r"F\d+\b.*", row[0])}
        if number.split(".")[0] in ("4", "5") and "F0" in rows and table[0][0] == "Frame":
            command = re.search(r"`([A-Z]+)`", rows["F1"][1])
            assert command, f"section {number}: the F1 of a frame table names no command: {rows['F1']}"
            text = "\n".join(intro)
            found = DIRECTION.findall(text) or DIRECTION.findall(heading)
            direction = found[-1] if found else None
            yield number, command.group(1), direction, rows["F0"][1], text, len(rows)
        intro = []


def test_sections_4_and_5_have_the_frame_tables_the_test_knows(spec):
    found = {(number.split(".")[0], command) for number, command, *_ in frame_tables(spec)}
    for expected in [("4", c) for c in ("REQUEST", "STATUS", "PING", "REPLY", "PONG", "CANCEL", "TURN",
                                         "CONVERSATION", "END")] + \
                    [("5", c) for c in ("READY", "RESULT", "JOB", "ERROR")]:
        assert expected in found, f"no frame table of {expected[1]} in section {expected[0]}"


def table_cases():
    return [
        pytest.param(*table, id=f"{table[0]}-{table[1]}" + (f"-{table[2][0]}-to-{table[2][1]}" if table[2] else ""))
        for table in frame_tables(SPEC.read_text("utf-8"))
    ]


@pytest.mark.parametrize("number, command, direction, f0, intro, frame_rows", table_cases())
def test_a_frame_table_s_f0_lists_the_versions_its_decoder_accepts(code, number, command, direction, f0, intro,
                                                                    frame_rows):
    protocol = "C" if number.startswith("4") else "W"
    if direction is None:
        known = code.directions_of(protocol, command)
        assert len(known) == 1, f"section {number}: {command}'s table does not say its direction, and decoders " \
                                f"{known} know it"
        direction = known[0]
    assert ("client" in direction) == (protocol == "C"), f"section {number}: {direction} is not CIP{protocol}"
    accepted = code.accepted_for(protocol, direction, command)
    every = set(code.versions(protocol).values())
    where = f"section {number}, {command} ({direction[0]} to {direction[1]})"
    if command == "JOB" and frame_rows == code.frames.get("jobV6"):
        accepted = {s for s in accepted if int(s[-2:]) >= code.packed_job_from}
    if not re.match(r"(V:\s*)?`CIP[CW]\d\d`", f0):
        assert "registered version" in f0, f"{where}: F0 names no signature list: {f0!r}"
        assert accepted == every, f"{where}: sent in the registered version, but the decoder accepts only " \
                                  f"{sorted(accepted)}"
        named = of(protocol, signatures_in(intro))
        assert not named or named == every, f"{where}: the text before the table names {sorted(named)}; the " \
                                            f"decoder accepts {sorted(every)}"
        return
    listed = signatures_in(f0)
    assert listed == accepted, f"{where}: F0 lists {sorted(listed)}; the decoder accepts {sorted(accepted)}"
