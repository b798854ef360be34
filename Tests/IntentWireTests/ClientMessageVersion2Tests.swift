import IntentWire
import Testing

/// Version 02 of the client protocol (idempotency keys, `Docs/IDEMPOTENCY.md`): a REQUEST has an eighth frame, the
/// idempotency key; everything else is decoded as in version 01, and the version is kept for the answers.
@Suite struct ClientMessageVersion2Tests {
    let decoder = ClientMessageDecoder()

    func v2(_ key: [UInt8]) -> [[UInt8]] {
        var frames = request()
        frames[0] = bytes("CIPC02")
        return frames + [key]
    }

    @Test func aVersion2RequestCarriesItsKeyAndVersion() throws {
        guard case .request(let decoded) = try decoder.decode(v2(bytes("pay-42"))) else {
            Issue.record("not a request")
            return
        }
        #expect(decoded.idempotencyKey == bytes("pay-42"))
        #expect(decoded.version == 2)
        guard case .request(let plain) = try decoder.decode(request()) else { return }
        #expect(plain.idempotencyKey == nil && plain.version == 1)
    }

    @Test func anEmptyKeyIsNoKey() throws {
        guard case .request(let decoded) = try decoder.decode(v2([])) else {
            Issue.record("not a request")
            return
        }
        #expect(decoded.idempotencyKey == nil && decoded.version == 2)
    }

    @Test func aVersion2RequestWithoutItsKeyFrameOrWithATooLongKeyIsMalformed() {
        var seven = request()
        seven[0] = bytes("CIPC02")
        for frames in [seven, v2([UInt8](repeating: 0x6B, count: 256)), request() + [bytes("k")]] {
            #expect(throws: ClientMessageError.self) { try decoder.decode(frames) }
            do {
                _ = try decoder.decode(frames)
            } catch {
                #expect(error.code == .malformed && error.check == 4, "\(error)")
            }
        }
    }

    @Test func statusAndPingDecodeInBothVersions() throws {
        #expect(try decoder.decode(frames("CIPC02", "PING")) == .ping)
        #expect(try decoder.decode(frames("CIPC02", "STATUS", "r")) == .status(requestID: bytes("r")))
        for (signature, version) in [("CIPC01", UInt8(1)), ("CIPC02", 2), ("CIPC03", 3)] {
            #expect(bytes(signature).withUnsafeBytes { ClientMessageDecoder.version(ofSignature: $0) } == version)
        }
        #expect(bytes("CIPC05").withUnsafeBytes { ClientMessageDecoder.version(ofSignature: $0) } == nil)
    }
}
