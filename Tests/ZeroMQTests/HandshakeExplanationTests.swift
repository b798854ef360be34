import CZeroMQ
import Testing
import ZeroMQ

/// What a failed handshake is reported as: a plain peer hears that the server may require CURVE only while no
/// handshake with it ever succeeded; after one did, a connection breaking off is a server that went away.
@Suite struct HandshakeExplanationTests {
    let brokeOff = ZMQMonitorEvent(
        kind: .handshakeFailedNoDetail, value: UInt32(ECONNRESET), endpoint: "tcp://127.0.0.1:5556")

    @Test func aConnectionBreakingOffAfterAnEarlierHandshakeSucceededIsNotExplainedAsCurve() {
        #expect(brokeOff.handshakeFailureExplanation(usingCurve: false, handshakeSucceededBefore: true) == nil)
        #expect(brokeOff.handshakeFailureExplanation(usingCurve: true, handshakeSucceededBefore: true) == nil)
    }

    @Test func aConnectionBreakingOffBeforeAnyHandshakeMentionsCurveAmongTheCauses() throws {
        let explanation = try #require(
            brokeOff.handshakeFailureExplanation(usingCurve: false, handshakeSucceededBefore: false))
        #expect(explanation.contains("not answering"))
        #expect(explanation.contains("CURVE"))
    }

    @Test func refusalsAreExplainedWhateverCameBefore() {
        let mismatch = ZMQMonitorEvent(
            kind: .handshakeFailedProtocol, value: UInt32(bitPattern: ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH),
            endpoint: "tcp://127.0.0.1:5556")
        let refused = ZMQMonitorEvent(kind: .handshakeFailedAuth, value: 400, endpoint: "tcp://127.0.0.1:5556")
        for before in [false, true] {
            #expect(
                mismatch.handshakeFailureExplanation(usingCurve: false, handshakeSucceededBefore: before)?
                    .contains("requires CURVE") == true)
            #expect(
                refused.handshakeFailureExplanation(usingCurve: true, handshakeSucceededBefore: before)?
                    .contains("allowlist") == true)
        }
    }
}
