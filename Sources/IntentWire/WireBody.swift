import ConciergeJSON

/// Small JSON bodies the broker writes itself (errors and progress) without building a `JSONValue`; strings are
/// escaped by `JSONText`, as the JSON serializer escapes them.
public enum WireBody {
    /// `{"code": code, "message": message}`
    public static func error(_ code: WireErrorCode, _ message: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(40 + message.utf8.count)
        out.append(contentsOf: #"{"code":"#.utf8)
        JSONText.appendString(code.rawValue, to: &out)
        out.append(contentsOf: #","message":"#.utf8)
        JSONText.appendString(message, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `{"code": "busy", "message": message, "pushback_rate": rate, "pushback_ms": milliseconds}`: a refusal
    /// that tells the client how many requests of the intent type per second the broker expects to take from it,
    /// for the next `milliseconds` (PROTOCOL.md 6.3, ``Pushback``).
    public static func busy(_ message: String, pushbackRate rate: Int, milliseconds: Int) -> [UInt8] {
        var out = error(.busy, message)
        out.removeLast()  // the closing brace
        out.append(contentsOf: #","pushback_rate":"#.utf8)
        out.append(contentsOf: String(rate).utf8)
        out.append(contentsOf: #","pushback_ms":"#.utf8)
        out.append(contentsOf: String(milliseconds).utf8)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `{"state": state, "phase": phase, "elapsed_ms": n, "worker"?: name}`
    public static func progress(state: String, phase: RequestPhase, elapsedMilliseconds: Int, worker: String?)
        -> [UInt8]
    {
        var out: [UInt8] = []
        out.append(contentsOf: #"{"elapsed_ms":"#.utf8)
        out.append(contentsOf: String(elapsedMilliseconds).utf8)
        out.append(contentsOf: #","phase":"#.utf8)
        JSONText.appendString(phase.description, to: &out)
        out.append(contentsOf: #","state":"#.utf8)
        JSONText.appendString(state, to: &out)
        if let worker {
            out.append(contentsOf: #","worker":"#.utf8)
            JSONText.appendString(worker, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Parses an ASCII decimal frame (no sign, at most 9 digits). Returns nil for anything else.
    public static func parseDecimal(_ frame: UnsafeRawBufferPointer) -> Int? {
        guard !frame.isEmpty, frame.count <= 9 else { return nil }
        var value = 0
        for byte in frame {
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }
}
