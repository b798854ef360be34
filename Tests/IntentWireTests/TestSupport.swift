import IntentWire

/// The frames of a message written as strings (UTF-8).
func frames(_ strings: String...) -> [[UInt8]] { strings.map { Array($0.utf8) } }

/// The bytes of a string.
func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

/// A valid REQUEST's frames; `change` replaces some of them.
func request(_ change: [Int: [UInt8]] = [:]) -> [[UInt8]] {
    var result = frames("CIPC01", "REQUEST", "r-1", "Echo", "handle", "", #"{"intent":{"type":"Echo"}}"#)
    for (index, frame) in change { result[index] = frame }
    return result
}

extension ClientMessageDecoder {
    /// The error decoding `frames` throws, or nil when it decodes.
    func error(_ frames: [[UInt8]]) -> ClientMessageError? {
        do throws(ClientMessageError) {
            _ = try decode(frames)
            return nil
        } catch {
            return error
        }
    }
}

extension WorkerMessageDecoder {
    /// The error decoding `frames` throws, or nil when it decodes.
    func error(_ frames: [[UInt8]], isRegistered: Bool = true) -> WorkerMessageError? {
        do throws(WorkerMessageError) {
            _ = try decode(frames, isRegistered: isRegistered)
            return nil
        } catch {
            return error
        }
    }
}

extension BrokerMessageDecoder {
    /// The error decoding `frames` throws, or nil when it decodes.
    func error(_ frames: [[UInt8]]) -> BrokerMessageError? {
        do throws(BrokerMessageError) {
            _ = try decode(frames)
            return nil
        } catch {
            return error
        }
    }
}
