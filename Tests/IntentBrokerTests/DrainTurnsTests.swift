import Testing

@testable import IntentBroker

@Suite struct DrainTurnsTests {
    /// The stall of a flood: a socket found empty early in a long drain must be asked again within a batch, or
    /// what reaches it meanwhile (the workers' results) waits for the end of the other socket's flood.
    @Test func aSocketFoundEmptyIsAskedAgainWithinABatch() {
        var turns = DrainTurns()
        turns.foundEmpty(.backend)
        var skipped = 0
        for _ in 0..<(10 * DrainTurns.batchSize) {
            #expect(turns.shouldRead(.frontend))  // the flooding side always has something
            if turns.shouldRead(.backend) {
                skipped = 0
                turns.foundEmpty(.backend)
            } else {
                skipped += 1
                #expect(skipped < DrainTurns.batchSize, "the backend was skipped for a whole batch")
            }
            let goesOn = turns.endTurn()
            #expect(goesOn)
        }
    }

    @Test func theDrainEndsWhenBothSocketsAreEmptyOrTheBudgetIsSpent() {
        var turns = DrainTurns()
        turns.foundEmpty(.frontend)
        turns.foundEmpty(.backend)
        let goesOn = turns.endTurn()
        #expect(!goesOn)

        var bounded = DrainTurns(budget: 3)
        let turnsTaken = (0..<3).map { _ in bounded.endTurn() }
        #expect(turnsTaken == [true, true, false])
    }

    @Test func actionsArePerformedOncePerBatchAndTimersEveryOtherBatch() {
        var turns = DrainTurns(budget: 8 * DrainTurns.batchSize)
        var batchEnds = 0
        var timerChecks = 0
        while turns.endTurn() {
            if turns.isBatchEnd { batchEnds += 1 }
            if turns.isTimerCheck { timerChecks += 1 }
        }
        #expect(batchEnds == 7)  // the last batch's end is the drain's end
        #expect(timerChecks == 3)
    }
}
