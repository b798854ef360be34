import ConciergeJSON

/// Decodes the messages workers send to the broker's backend, checking their frames in the order of
/// `Schemas/PROTOCOL.md` section 5.12.
///
/// Pure: no sockets, no clocks, no shared state. Check 4 (is the routing id registered?) needs the broker's worker
/// table, so the broker says whether it is: the answer to an unregistered worker then comes out in its place in the
/// order, as ``WorkerCommand/unregistered(_:)``.
public struct WorkerMessageDecoder: Sendable {
    /// The limits frames are checked against (only ``WireLimits/maxFrames`` applies to worker messages).
    public var limits: WireLimits

    /// A decoder checking against `limits`.
    public init(limits: WireLimits = WireLimits()) {
        self.limits = limits
    }

    /// Decodes one worker message.
    /// - Parameters:
    ///   - frames: The message, F0 first.
    ///   - isRegistered: Whether the sender's routing id is registered (check 4).
    /// - Throws: ``WorkerMessageError`` for the first failed check (1, 2, 3, 5 or 6).
    public func decode(_ frames: WireFrames, isRegistered: Bool) throws(WorkerMessageError) -> WorkerCommand {
        let count = frames.count
        // Check 1: at least 2 frames, and no more than the limit.
        guard count >= 2 else {
            throw WorkerMessageError(code: .malformed, message: "expected [CIPW01, command, ...] frames", check: 1)
        }
        guard count <= limits.maxFrames, frames.dropped == 0 else {
            throw WorkerMessageError(
                code: .malformed, message: "a message has at most \(limits.maxFrames) frames", check: 1
            )
        }
        // Check 2: the signature.
        guard let version = Self.version(ofSignature: frames[0]) else {
            throw WorkerMessageError(
                code: .unsupportedVersion, message: "this broker speaks CIPW01 to CIPW06", check: 2)
        }
        let command = frames[1]
        let name = Self.name(of: command)
        // Check 3: READY (its signature chooses the worker's version, sections 5.1 and 5.2).
        if name == .ready {
            return .ready(try decodeReady(frames, version: version))
        }
        // Check 4: everything else needs a registration.
        guard isRegistered else { return .unregistered(name) }
        // Checks 5 and 6.
        switch name {
        case .result?: return .result(try decodeResult(frames, version: version))
        case .heartbeat?: return .heartbeat
        case .drain?: return .drain
        case .disconnect?: return .disconnect
        case .ready?, .stats?, nil:
            throw WorkerMessageError(
                code: .unknownCommand, message: "unknown command \"\(WireText.display(command))\"", check: 5
            )
        }
    }

    /// Whether a message is a STATS query (section 5.14): F0 `CIPW02` or later and F1 `STATS`. The broker asks this before
    /// ``decode(_:isRegistered:)``, since a query needs no registration (check 4 does not apply to it): any peer of
    /// the backend may ask, e.g. a pool that scales itself. A `CIPW01` message naming STATS is not a query (it is an
    /// unknown command, or from an unregistered peer answered DISCONNECT, as before version 02).
    /// - Throws: ``WorkerMessageError`` `malformed` (check 3) for a STATS with frames after F1.
    public func isStatsQuery(_ frames: WireFrames) throws(WorkerMessageError) -> Bool {
        // `views`, not `count`: the frames kept, not counting those a receiver dropped.
        guard frames.views.count >= 2, Self.version(ofSignature: frames[0]) ?? 1 >= 2,
            CIP.Worker.stats.matches(frames[1])
        else {
            return false
        }
        guard frames.count == CIP.Frames.stats, frames.dropped == 0 else {
            throw WorkerMessageError(
                code: .malformed,
                message:
                    "STATS takes 2 frames: \(CIP.workerSignature(version: Self.version(ofSignature: frames[0]) ?? 2)), STATS",
                check: 3, command: .stats)
        }
        return true
    }

    /// ``isStatsQuery(_:)`` for a message given as byte arrays (tests, cold paths).
    public func isStatsQuery(_ frames: [[UInt8]]) throws(WorkerMessageError) -> Bool {
        try WireFrames.withFrames(frames) { frames in
            Result { () throws(WorkerMessageError) in try isStatsQuery(frames) }
        }.get()
    }

    /// Decodes one worker message given as byte arrays (tests, fuzz targets, cold paths).
    public func decode(_ frames: [[UInt8]], isRegistered: Bool) throws(WorkerMessageError) -> WorkerCommand {
        try WireFrames.withFrames(frames) { frames in
            Result { () throws(WorkerMessageError) in try decode(frames, isRegistered: isRegistered) }
        }.get()
    }

    /// The worker protocol version a signature frame names (1 to 6), or nil for one this broker does not speak.
    public static func version(ofSignature frame: UnsafeRawBufferPointer) -> UInt8? {
        if CIP.workerSignature.matches(frame) { return 1 }
        if CIP.workerSignatureV2.matches(frame) { return 2 }
        if CIP.workerSignatureV3.matches(frame) { return 3 }
        if CIP.workerSignatureV4.matches(frame) { return 4 }
        if CIP.workerSignatureV5.matches(frame) { return 5 }
        if CIP.workerSignatureV6.matches(frame) { return 6 }
        return nil
    }

    /// The worker command F1 names, if any.
    private static func name(of frame: UnsafeRawBufferPointer) -> WorkerCommand.Name? {
        if CIP.Worker.result.matches(frame) { return .result }
        if CIP.Worker.heartbeat.matches(frame) { return .heartbeat }
        if CIP.Worker.ready.matches(frame) { return .ready }
        if CIP.Worker.drain.matches(frame) { return .drain }
        if CIP.Worker.disconnect.matches(frame) { return .disconnect }
        return nil
    }

    /// Check 3: a READY.
    private func decodeReady(_ frames: WireFrames, version: UInt8) throws(WorkerMessageError) -> WorkerReady {
        func fail(_ message: String) -> WorkerMessageError {
            WorkerMessageError(code: .malformed, message: message, check: 3, command: .ready)
        }
        guard frames.count >= CIP.Frames.ready else {
            throw fail("READY takes CIPW01, READY, capacity (1-1000), name, and one frame per intent type")
        }
        guard let capacity = WireBody.parseDecimal(frames[2]), capacity >= 1, capacity <= CIP.maxWorkerCapacity
        else {
            throw fail("READY capacity must be a decimal number from 1 to \(CIP.maxWorkerCapacity)")
        }
        let name = frames[3]
        guard !name.isEmpty, name.count <= CIP.maxWorkerNameLength, name[0] != 0, JSONText.isValidUTF8(name) else {
            throw fail("the worker name must be 1 to 255 bytes of UTF-8 and must not begin with a zero byte")
        }
        var intentTypes: [[UInt8]] = []
        var definitions: [AnnouncedDefinition] = []
        // Version 04 (section 5.16): each type is followed by its definition.
        let step = version >= 4 ? 2 : 1
        if version >= 4, frames.count % 2 != 0 {
            throw fail("a CIPW04 READY takes each intent type followed by its definition (an even frame count)")
        }
        for index in stride(from: 4, to: frames.count, by: step) {
            let type = frames[index]
            guard !type.isEmpty, type.count <= CIP.maxIntentTypeLength, JSONText.isValidUTF8(type) else {
                throw fail("intent types must be 1 to 255 bytes of UTF-8 (F\(index) is not)")
            }
            let bytes = Array(type)
            var definition: AnnouncedDefinition?
            if version >= 4 {
                do {
                    definition = try AnnouncedDefinition(
                        frame: Array(frames[index + 1]), intentType: String(decoding: bytes, as: UTF8.self))
                } catch {
                    throw fail("F\(index + 1), the definition of \(WireText.display(type)), \(error.message)")
                }
            }
            if let known = intentTypes.firstIndex(of: bytes) {
                if let definition, definitions[known] != definition {
                    throw fail("READY announces two different definitions of \(WireText.display(type))")
                }
                continue
            }
            intentTypes.append(bytes)
            if let definition { definitions.append(definition) }
        }
        return WorkerReady(
            capacity: capacity, name: Array(name), intentTypes: intentTypes, version: version, definitions: definitions)
    }

    /// Check 6: a RESULT.
    private func decodeResult(_ frames: WireFrames, version: UInt8) throws(WorkerMessageError) -> WorkerResult {
        func fail(_ message: String) -> WorkerMessageError {
            WorkerMessageError(code: .malformed, message: message, check: 6, command: .result)
        }
        guard frames.count == CIP.Frames.result else {
            throw fail("RESULT takes 5 frames: \(CIP.workerSignature(version: version)), RESULT, job id, outcome, body")
        }
        guard frames[2].count == CIP.jobIDLength else { throw fail("the job id must be 8 bytes") }
        let bodySize = frames[WorkerResult.bodyIndex].count
        guard bodySize > 0 else { throw fail("the body frame is empty") }
        return WorkerResult(
            jobID: frames[2].loadUnaligned(as: UInt64.self), outcome: JobOutcome(frame: frames[3]), bodySize: bodySize
        )
    }
}
