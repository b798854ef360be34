import ConciergeJSON

/// The header frame of a version-06 JOB (`Schemas/PROTOCOL.md` section 5.17): the fields of a version-05 JOB but its
/// body, packed into one binary frame, so that a JOB is 4 message parts instead of 10 to 12.
///
/// Layout, integers little-endian: job id (8 bytes), phase (1), last phase (1), time left in ms (8), attempt (4), the
/// intent type (its length in 1 byte, then its bytes), the idempotency key (length in 1 byte, then its bytes) and,
/// only when the job has a trace context, traceparent and tracestate (each: length in 2 bytes, then its bytes).
public enum PackedJobHeader {
    /// The bytes before the intent type: job id, phase, last phase, time left, attempt.
    public static let fixedLength = 22
    /// The shortest header: the fixed part, a one-byte intent type and an empty key.
    public static let minimumLength = fixedLength + 3

    /// The header of a job, as ``BrokerMessageEncoder/job(into:to:version:jobID:intentType:phase:timeLeftMilliseconds:body:idempotencyKey:attempt:lastPhase:traceContext:)``
    /// sends it to a version-06 worker. `intentType` must be 1...255 bytes, the key at most 255 (the broker checked
    /// both on the REQUEST).
    @inlinable
    public static func encode(
        jobID: some WireBytes, intentType: some WireBytes, phase: RequestPhase, lastPhase: RequestPhase,
        timeLeftMilliseconds: UInt64, attempt: Int, idempotencyKey: [UInt8]?, traceContext: TraceContext?
    ) -> [UInt8] {
        var header = ByteCollector()
        _ = jobID.append(to: &header, more: true)
        header.bytes.append(phase.packed)
        header.bytes.append(lastPhase.packed)
        header.appendLittleEndian(timeLeftMilliseconds)
        header.appendLittleEndian(UInt32(clamping: max(1, attempt)))
        let typeStart = header.bytes.count
        header.bytes.append(0)
        _ = intentType.append(to: &header, more: true)
        header.bytes[typeStart] = UInt8(truncatingIfNeeded: header.bytes.count - typeStart - 1)
        let key = idempotencyKey ?? []
        header.bytes.append(UInt8(truncatingIfNeeded: key.count))
        header.bytes.append(contentsOf: key)
        if let traceContext {
            let parent = traceContext.traceparent.utf8, state = traceContext.tracestate.utf8
            header.appendLittleEndian(UInt16(truncatingIfNeeded: parent.count))
            header.bytes.append(contentsOf: parent)
            header.appendLittleEndian(UInt16(truncatingIfNeeded: state.count))
            header.bytes.append(contentsOf: state)
        }
        return header.bytes
    }

    /// Reads a header (checks W3 to W5 of section 5.12 as section 5.17 applies them) into a job whose body has
    /// `bodySize` bytes.
    /// - Throws: ``BrokerMessageError``, with the job id when the header has at least 8 bytes.
    public static func decode(
        _ header: UnsafeRawBufferPointer, bodySize: Int, version: UInt8
    ) throws(BrokerMessageError) -> WorkerJob {
        guard header.count >= CIP.jobIDLength else {
            throw BrokerMessageError(message: "the JOB header is shorter than a job id (8 bytes)", check: 3)
        }
        let jobID = Array(header[0..<CIP.jobIDLength])
        func failure(_ message: String, _ check: Int) -> BrokerMessageError {
            BrokerMessageError(message: message, jobID: jobID, check: check)
        }
        guard header.count >= minimumLength else {
            throw failure("the JOB header has \(header.count) bytes, fewer than \(minimumLength)", 3)
        }
        let attempt = header.loadUnaligned(fromByteOffset: 18, as: UInt32.self).littleEndian
        guard attempt >= 1 else { throw failure("the attempt must be at least 1", 3) }
        var at = fixedLength
        // The intent type (W5 once its bytes are known to be there, W3 if they are not).
        let typeLength = Int(header[at])
        at += 1
        guard at + typeLength + 1 <= header.count else {
            throw failure("the JOB header's intent type runs past its end", 3)
        }
        let intentType = UnsafeRawBufferPointer(rebasing: header[at..<(at + typeLength)])
        at += typeLength
        let keyLength = Int(header[at])
        at += 1
        guard at + keyLength <= header.count else {
            throw failure("the JOB header's idempotency key runs past its end", 3)
        }
        let key = keyLength > 0 ? Array(header[at..<(at + keyLength)]) : nil
        at += keyLength
        var traceContext: TraceContext?
        if at < header.count {
            guard at + 2 <= header.count else { throw failure("the JOB header's traceparent length is cut short", 3) }
            let parentLength = Int(header[at]) | Int(header[at + 1]) << 8
            at += 2
            guard at + parentLength + 2 <= header.count else {
                throw failure("the JOB header's traceparent runs past its end", 3)
            }
            let parent = UnsafeRawBufferPointer(rebasing: header[at..<(at + parentLength)])
            at += parentLength
            let stateLength = Int(header[at]) | Int(header[at + 1]) << 8
            at += 2
            guard at + stateLength == header.count else {
                throw failure(
                    at + stateLength > header.count
                        ? "the JOB header's tracestate runs past its end"
                        : "the JOB header has \(header.count - at - stateLength) bytes after its tracestate", 3)
            }
            let state = UnsafeRawBufferPointer(rebasing: header[at..<(at + stateLength)])
            do {
                traceContext = try TraceContext(traceparentFrame: parent, tracestateFrame: state)
            } catch {
                throw failure(error.message, 3)
            }
        }
        // W4: the phases.
        guard let phase = RequestPhase(packed: header[8]), let lastPhase = RequestPhase(packed: header[9]),
            lastPhase.order >= phase.order
        else {
            throw failure(
                "the JOB header's phase bytes \(header[8]) and \(header[9]) must be 0 to 2 (resolve, confirm, handle), "
                    + "the last not before the first", 4)
        }
        // W5: the intent type.
        guard typeLength > 0, JSONText.isValidUTF8(intentType) else {
            throw failure("the intent type must be 1 to 255 bytes of UTF-8", 5)
        }
        // W7: the body.
        guard bodySize > 0 else { throw failure("the body frame is empty", 7) }
        return WorkerJob(
            jobID: jobID, intentType: String(decoding: intentType, as: UTF8.self), phase: phase,
            timeLeftMilliseconds: Int(clamping: header.loadUnaligned(fromByteOffset: 10, as: UInt64.self).littleEndian),
            bodySize: bodySize, idempotencyKey: key, attempt: Int(attempt), lastPhase: lastPhase, version: version,
            traceContext: traceContext
        )
    }
}

/// Collects the frames written to it into one array: the packed header.
@usableFromInline
struct ByteCollector: WireSink {
    @usableFromInline var bytes: [UInt8]

    @inlinable init() {
        bytes = []
        bytes.reserveCapacity(96)
    }

    @inlinable mutating func append(_ raw: UnsafeRawBufferPointer, more: Bool) -> Bool {
        bytes.append(contentsOf: raw)
        return true
    }

    @inlinable mutating func append(body: Never, more: Bool) -> Bool {}

    @inlinable mutating func appendLittleEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}

extension RequestPhase {
    /// The phase as a packed header's byte (section 5.17): 0 resolve, 1 confirm, 2 handle.
    @inlinable var packed: UInt8 {
        switch self {
        case .resolve: 0
        case .confirm: 1
        case .handle: 2
        case .lifecycle: 3  // never in a JOB: the decoder refuses it
        }
    }

    /// The phase a packed header's byte names; nil for any other byte.
    @inlinable init?(packed: UInt8) {
        switch packed {
        case 0: self = .resolve
        case 1: self = .confirm
        case 2: self = .handle
        default: return nil
        }
    }
}
