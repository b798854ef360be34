import IntentKit
import Testing

/// How a JOB's idempotency key (opaque bytes, `Schemas/PROTOCOL.md` section 5.13) reaches handlers as text.
@Suite struct HandlerContextKeyTests {
    @Test func aUTF8KeyIsItsTextAndAnEmptyKeyIsNone() {
        #expect(HandlerContext.idempotencyKey(bytes: Array("pay-42".utf8)) == "pay-42")
        #expect(HandlerContext.idempotencyKey(bytes: Array("clé-✓".utf8)) == "clé-✓")
        #expect(HandlerContext.idempotencyKey(bytes: []) == nil)
    }

    @Test func anyOtherKeyIsLowerCaseHexAfter0x() {
        #expect(HandlerContext.idempotencyKey(bytes: [0xFF, 0x01, 0xAB]) == "0xff01ab")
        #expect(HandlerContext.idempotencyKey(bytes: [0x41, 0xC3]) == "0x41c3")  // a truncated UTF-8 sequence
        let distinct = [[0xFF], [0xFE], [0xFF, 0x00]].map { HandlerContext.idempotencyKey(bytes: $0) }
        #expect(Set(distinct).count == 3)
    }

    @Test func aContextWithoutAKeyIsAFirstAttempt() {
        let context = HandlerContext(jobID: "j", workerName: "w", phase: .handle, timeLeft: .seconds(1))
        #expect(context.idempotencyKey == nil && context.attempt == 1)
        let retried = HandlerContext(idempotencyKey: "k", attempt: 2)
        #expect(retried.idempotencyKey == "k" && retried.attempt == 2)
    }

    @Test func aJobIDGivenAsBytesReadsAsLowerCaseHexAndCanBeReplaced() {
        var context = HandlerContext(
            jobIDBytes: 0x0123_4567_89AB_CDEF, workerName: "w", phase: .handle, deadline: nil, idempotencyKey: nil,
            attempt: 1)
        #expect(context.jobID == "0123456789abcdef")
        #expect(
            HandlerContext(
                jobIDBytes: 0xFF, workerName: "w", phase: .handle, deadline: nil, idempotencyKey: nil, attempt: 1
            ).jobID == "00000000000000ff")
        context.jobID = "mine"
        #expect(context.jobID == "mine")
    }
}
