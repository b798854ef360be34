import Synchronization
import Testing

@testable import IntentWorker

/// The hand-over of the worker's socket loop (``LoopRelay``): exactly one thread owns the loop at any time.
@Suite struct LoopRelayTests {
    @Test func aStandbyTakesOverOnlyAHandlerItSawRunningAlready() {
        let relay = LoopRelay()
        let idle = relay.observe()
        #expect(!relay.takeOver(ifStillAt: idle))  // the owner is in the loop, not in a handler
        let token = relay.enterHandler()
        let seen = relay.observe()
        #expect(LoopRelay.isInHandler(seen))
        #expect(relay.leaveHandler(token))  // that handler returned in time
        let next = relay.enterHandler()
        #expect(!relay.takeOver(ifStillAt: seen))  // another handler runs now: the first look does not count
        #expect(relay.takeOver(ifStillAt: relay.observe()))
        #expect(!relay.leaveHandler(next))  // the old owner learns it lost the loop
    }

    @Test func nothingTakesOverAFinishedLoopAndAThreadStillInAHandlerLearnsItIsOver() {
        let relay = LoopRelay()
        let stuck = relay.enterHandler()  // the first owner's handler never returns in time
        #expect(relay.takeOver(ifStillAt: relay.observe()))
        relay.finish()  // the new owner ends the loop
        #expect(LoopRelay.isFinished(relay.observe()))
        #expect(!relay.takeOver(ifStillAt: relay.observe()))
        #expect(!relay.leaveHandler(stuck))
    }

    /// The owner leaving its handler and the standby taking over race on real threads: exactly one wins each time.
    @Test func theOwnerLeavingAndTheStandbyTakingOverNeverBothWin() async {
        final class Wins: Sendable {
            let owner = Atomic<Int>(0)
            let standby = Atomic<Int>(0)
        }
        let rounds = 20_000
        let relay = LoopRelay()
        let wins = Wins()
        for _ in 0..<rounds {
            let token = relay.enterHandler()
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    if relay.leaveHandler(token) { wins.owner.add(1, ordering: .relaxed) }
                }
                group.addTask {
                    if relay.takeOver(ifStillAt: token) { wins.standby.add(1, ordering: .relaxed) }
                }
            }
        }
        let owner = wins.owner.load(ordering: .relaxed)
        let standby = wins.standby.load(ordering: .relaxed)
        #expect(owner + standby == rounds, "owner \(owner), standby \(standby)")
        #expect(!LoopRelay.isInHandler(relay.observe()))
    }
}
