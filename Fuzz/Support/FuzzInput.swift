#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The input encodings shared by the fuzz targets (documented in Fuzz/README.md).
enum FuzzInput {
    /// Splits a fuzz input into an options byte and the frames of one multipart message.
    ///
    /// Layout: one options byte (its meaning is the target's), one byte with the number of frames (0-255), then each
    /// frame as a 2-byte big-endian length followed by that many bytes. A length that runs past the end of the input
    /// takes what is left; frames after the end of the input are empty; bytes after the last frame are ignored.
    static func message(_ data: UnsafeRawBufferPointer) -> (options: UInt8, frames: [[UInt8]]) {
        guard data.count >= 2 else { return (data.first ?? 0, []) }
        let options = data[0]
        let count = Int(data[1])
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        var index = 2
        for _ in 0..<count {
            guard index + 2 <= data.count else {
                frames.append([])
                index = data.count
                continue
            }
            let length = Int(data[index]) << 8 | Int(data[index + 1])
            index += 2
            let end = min(data.count, index + length)
            frames.append(Array(data[index..<end]))
            index = end
        }
        return (options, frames)
    }

    /// The encoding of `frames` with `options` (the inverse of ``message(_:)`` for frames of at most 65535 bytes).
    static func encode(options: UInt8, frames: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = [options, UInt8(frames.count)]
        for frame in frames {
            out.append(UInt8(frame.count >> 8))
            out.append(UInt8(frame.count & 0xFF))
            out.append(contentsOf: frame)
        }
        return out
    }

    /// Whether `bytes` are valid UTF-8, by the standard library (an oracle independent of the code under test).
    static func isUTF8(_ bytes: some Collection<UInt8>) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    /// The ASCII bytes of a string.
    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
}

/// Stops the fuzz target with `message` when an invariant does not hold: libFuzzer reports the abort as a crash and
/// saves the input.
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        var text = "INVARIANT FAILED: \(message())\n"
        _ = text.withUTF8 { write(2, $0.baseAddress, $0.count) }
        abort()
    }
}
