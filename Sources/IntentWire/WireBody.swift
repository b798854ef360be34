/// Small JSON bodies the broker writes itself (errors and progress), without a JSON library.
public enum WireBody {
    /// `{"code": code, "message": message}`
    public static func error(_ code: WireErrorCode, _ message: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(40 + message.utf8.count)
        out.append(contentsOf: #"{"code":"#.utf8)
        appendString(code.rawValue, to: &out)
        out.append(contentsOf: #","message":"#.utf8)
        appendString(message, to: &out)
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
        appendString(phase.description, to: &out)
        out.append(contentsOf: #","state":"#.utf8)
        appendString(state, to: &out)
        if let worker {
            out.append(contentsOf: #","worker":"#.utf8)
            appendString(worker, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Appends `string` as a JSON string literal (quotes, backslashes and control characters escaped).
    public static func appendString(_ string: String, to out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
            case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: Array(#"\u00"#.utf8))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
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
