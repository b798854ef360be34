import ConciergeJSON

/// Decodes the messages clients send to the broker's frontend, checking their frames in the order of
/// `Schemas/PROTOCOL.md` section 4.8 (checks 1-10: everything that depends on the frames alone; checks 11-14 need
/// the broker's state and are the broker's).
///
/// Pure: no sockets, no clocks, no shared state. The decoder copies the request id and intent type (a few bytes)
/// and leaves the body in its frame.
public struct ClientMessageDecoder: Sendable {
    /// The limits frames are checked against.
    public var limits: WireLimits

    /// A decoder checking against `limits`.
    public init(limits: WireLimits = WireLimits()) {
        self.limits = limits
    }

    /// Decodes one client message.
    /// - Throws: ``ClientMessageError`` for the first failed check, with what the error answer carries.
    public func decode(_ frames: WireFrames) throws(ClientMessageError) -> ClientCommand {
        let count = frames.count
        // Check 1: at least 2 frames, and no more than the limit.
        guard count >= 2 else {
            throw ClientMessageError(code: .malformed, message: "expected [CIPC01, command, ...] frames", check: 1)
        }
        guard count <= limits.maxFrames, frames.dropped == 0 else {
            throw ClientMessageError(
                code: .malformed, message: "a message has at most \(limits.maxFrames) frames",
                requestID: echo(frames), check: 1
            )
        }
        // Check 2: the signature.
        guard let version = Self.version(ofSignature: frames[0]) else {
            throw ClientMessageError(
                code: .unsupportedVersion, message: "this broker speaks CIPC01, CIPC02, CIPC03 and CIPC04", check: 2)
        }
        // Check 3: the command.
        let command = frames[1]
        if CIP.Client.request.matches(command) {
            return .request(try decodeRequest(frames, version: version))
        }
        if CIP.Client.status.matches(command) {
            guard count == CIP.Frames.status, isRequestID(frames[2]) else {
                throw ClientMessageError(
                    code: .malformed, message: "STATUS takes exactly [CIPC01, STATUS, request id (1 to 255 bytes)]",
                    answer: .status, requestID: echo(frames), check: 4
                )
            }
            return .status(requestID: Array(frames[2]))
        }
        if CIP.Client.ping.matches(command) {
            return .ping
        }
        if version >= 2, CIP.Client.cancel.matches(command) {
            guard count == CIP.Frames.cancel, isRequestID(frames[2]) else {
                throw ClientMessageError(
                    code: .malformed, message: "CANCEL takes exactly [CIPC02, CANCEL, request id (1 to 255 bytes)]",
                    answer: .status, requestID: echo(frames), check: 4
                )
            }
            return .cancel(requestID: Array(frames[2]))
        }
        if version >= 3 {
            if CIP.Client.turn.matches(command) {
                return .turn(try decodeTurn(frames, version: version))
            }
            let read = CIP.Client.conversation.matches(command)
            if read || CIP.Client.end.matches(command) {
                guard count == CIP.Frames.conversation, ClientTurn.isConversationID(frames[2]) else {
                    throw ClientMessageError(
                        code: .malformed,
                        message:
                            "\(read ? "CONVERSATION" : "END") takes exactly [CIPC03, \(read ? "CONVERSATION" : "END"), "
                            + "conversation id (1 to 255 bytes of printable ASCII)]",
                        answer: .conversation, requestID: echo(frames), check: 4
                    )
                }
                let id = Array(frames[2])
                return read ? .readConversation(conversationID: id) : .endConversation(conversationID: id)
            }
        }
        throw ClientMessageError(
            code: .unknownCommand, message: "unknown command \"\(WireText.display(command))\"",
            requestID: echo(frames), check: 3
        )
    }

    /// Decodes one client message given as byte arrays (tests, fuzz targets, cold paths).
    public func decode(_ frames: [[UInt8]]) throws(ClientMessageError) -> ClientCommand {
        try WireFrames.withFrames(frames) { frames in
            Result { () throws(ClientMessageError) in try decode(frames) }
        }.get()
    }

    /// The client protocol version a signature frame names (1 to 4), or nil for one this broker does not speak.
    public static func version(ofSignature frame: UnsafeRawBufferPointer) -> UInt8? {
        if CIP.clientSignature.matches(frame) { return 1 }
        if CIP.clientSignatureV2.matches(frame) { return 2 }
        if CIP.clientSignatureV3.matches(frame) { return 3 }
        if CIP.clientSignatureV4.matches(frame) { return 4 }
        return nil
    }

    /// Checks 4-10: a REQUEST.
    private func decodeRequest(_ frames: WireFrames, version: UInt8) throws(ClientMessageError) -> ClientRequest {
        // Check 4: exactly 7 frames (8 from version 02: the idempotency key, at most 255 bytes; 10 from version
        // 04: the trace context).
        let expected = version >= 4 ? CIP.Frames.requestV4 : version >= 2 ? CIP.Frames.requestV2 : CIP.Frames.request
        guard frames.count == expected else {
            throw ClientMessageError(
                code: .malformed,
                message: version >= 4
                    ? "REQUEST takes 10 frames: CIPC04, REQUEST, request id, intent type, phase, deadline, body, "
                        + "idempotency key, traceparent, tracestate"
                    : version >= 2
                        ? "REQUEST takes 8 frames: CIPC0\(version), REQUEST, request id, intent type, phase, deadline, "
                            + "body, idempotency key"
                        : "REQUEST takes 7 frames: CIPC01, REQUEST, request id, intent type, phase, deadline, body",
                requestID: echo(frames), check: 4
            )
        }
        var idempotencyKey: [UInt8]?
        if version >= 2 {
            let key = frames[CIP.Frames.request]
            guard key.count <= CIP.maxIdempotencyKeyLength else {
                throw ClientMessageError(
                    code: .malformed, message: "the idempotency key must be 0 to 255 bytes", requestID: echo(frames),
                    check: 4)
            }
            if !key.isEmpty { idempotencyKey = Array(key) }
        }
        // Check 4, after the key: the trace context (version 04).
        let traceContext = version >= 4 ? try self.traceContext(frames, at: CIP.Frames.requestV2) : nil
        // Check 5: the request id.
        guard isRequestID(frames[2]) else {
            throw ClientMessageError(code: .badRequestID, message: "request id must be 1 to 255 bytes", check: 5)
        }
        let requestID = Array(frames[2])
        // Check 6: the phase.
        guard let phase = RequestPhase(frame: frames[4]) else {
            throw ClientMessageError(
                code: .badPhase, message: "phase must be resolve, confirm, handle or lifecycle",
                requestID: requestID, check: 6
            )
        }
        // Check 7: the intent type.
        let intentType = frames[3]
        guard !intentType.isEmpty, intentType.count <= CIP.maxIntentTypeLength else {
            throw ClientMessageError(
                code: .malformed, message: "intent type must be 1 to 255 bytes", requestID: requestID, phase: phase,
                check: 7
            )
        }
        guard JSONText.isValidUTF8(intentType) else {
            throw ClientMessageError(
                code: .malformed, message: "intent type must be valid UTF-8", requestID: requestID, phase: phase,
                check: 7
            )
        }
        // Check 8: the deadline.
        let deadline = try self.deadline(frames[5], requestID: requestID, phase: phase)
        // Checks 9 and 10: the body.
        let bodySize = frames[ClientRequest.bodyIndex].count
        guard bodySize > 0 else {
            throw ClientMessageError(
                code: .malformed, message: "the body frame is empty", requestID: requestID, phase: phase, check: 9
            )
        }
        guard bodySize <= limits.maxBodySize else {
            throw ClientMessageError(
                code: .tooLarge, message: "body of \(bodySize) bytes exceeds the maximum of \(limits.maxBodySize)",
                requestID: requestID, phase: phase, check: 10
            )
        }
        let (type, definitionVersion) = ClientRequest.splitVersion(intentType)
        return ClientRequest(
            requestID: requestID, intentType: type, phase: phase, deadlineMilliseconds: deadline,
            bodySize: bodySize, idempotencyKey: idempotencyKey, version: version, traceContext: traceContext,
            definitionVersion: definitionVersion
        )
    }

    /// A TURN (version 03, section 4.11): the frame checks of a REQUEST, in the same order, for its frames.
    private func decodeTurn(_ frames: WireFrames, version: UInt8) throws(ClientMessageError) -> ClientTurn {
        guard frames.count == (version >= 4 ? CIP.Frames.turnV4 : CIP.Frames.turn) else {
            throw ClientMessageError(
                code: .malformed,
                message: version >= 4
                    ? "TURN takes 10 frames: CIPC04, TURN, request id, conversation id, turn, deadline, body, flags, "
                        + "traceparent, tracestate"
                    : "TURN takes 8 frames: CIPC03, TURN, request id, conversation id, turn, deadline, body, flags",
                requestID: echo(frames), check: 4
            )
        }
        let traceContext = version >= 4 ? try self.traceContext(frames, at: CIP.Frames.turn) : nil
        guard isRequestID(frames[2]) else {
            throw ClientMessageError(code: .badRequestID, message: "request id must be 1 to 255 bytes", check: 5)
        }
        let requestID = Array(frames[2])
        guard ClientTurn.isConversationID(frames[3]) else {
            throw ClientMessageError(
                code: .malformed, message: "conversation id must be 1 to 255 bytes of printable ASCII",
                requestID: requestID, check: 7
            )
        }
        guard let turn = WireBody.parseDecimal(frames[4]), turn >= 1 else {
            throw ClientMessageError(
                code: .malformed, message: "turn must be a decimal number from 1", requestID: requestID, check: 6)
        }
        let deadline = try self.deadline(frames[5], requestID: requestID, phase: nil)
        let bodySize = frames[ClientTurn.bodyIndex].count
        guard bodySize > 0 else {
            throw ClientMessageError(
                code: .malformed, message: "the body frame is empty", requestID: requestID, check: 9)
        }
        guard bodySize <= limits.maxBodySize else {
            throw ClientMessageError(
                code: .tooLarge, message: "body of \(bodySize) bytes exceeds the maximum of \(limits.maxBodySize)",
                requestID: requestID, check: 10
            )
        }
        guard let flags = ClientTurn.Flags(frame: frames[7]) else {
            throw ClientMessageError(
                code: .malformed, message: "flags must be empty or words among record and confirm, one space apart",
                requestID: requestID, check: 4
            )
        }
        return ClientTurn(
            requestID: requestID, conversationID: Array(frames[3]), turn: turn, deadlineMilliseconds: deadline,
            bodySize: bodySize, flags: flags, version: version, traceContext: traceContext)
    }

    /// Check 4, the trace context of a `CIPC04` REQUEST or TURN: the traceparent at `index`, the tracestate after it.
    private func traceContext(_ frames: WireFrames, at index: Int) throws(ClientMessageError) -> TraceContext? {
        do {
            return try TraceContext(traceparentFrame: frames[index], tracestateFrame: frames[index + 1])
        } catch {
            throw ClientMessageError(
                code: .badTraceContext, message: error.message, requestID: echo(frames), check: 4)
        }
    }

    /// Check 8: a deadline frame, empty (nil: the broker's default) or a decimal within the bounds.
    private func deadline(
        _ frame: UnsafeRawBufferPointer, requestID: [UInt8], phase: RequestPhase?
    ) throws(ClientMessageError) -> Int? {
        guard !frame.isEmpty else { return nil }
        let maximum = limits.maxDeadlineMilliseconds
        guard let milliseconds = WireBody.parseDecimal(frame), milliseconds >= CIP.deadlineBounds.lowerBound,
            milliseconds <= maximum
        else {
            throw ClientMessageError(
                code: .badDeadline,
                message: "deadline must be a decimal number of milliseconds from "
                    + "\(CIP.deadlineBounds.lowerBound) to \(maximum)",
                requestID: requestID, phase: phase, check: 8
            )
        }
        return milliseconds
    }

    /// Whether a frame is a usable request id: 1 to 255 bytes.
    @inline(__always)
    private func isRequestID(_ frame: UnsafeRawBufferPointer) -> Bool {
        !frame.isEmpty && frame.count <= CIP.maxRequestIDLength
    }

    /// "Echo F2": the message's F2 if it has one of at most 255 bytes, else empty.
    private func echo(_ frames: WireFrames) -> [UInt8] {
        guard frames.views.count >= 3, frames[2].count <= CIP.maxRequestIDLength else { return [] }
        return Array(frames[2])
    }
}
