import ConciergeTestKit
import Foundation
import Testing

/// PROTOCOL.md §14: the default deadline is bounded to 10...60000 ms and never above the hard limit. A broker told
/// otherwise refuses to start (exit 1, `bad-configuration`) instead of answering requests the spec forbids.
extension EndToEnd {
    @Suite(.serialized) struct ConfigurationBoundsTests {
        @Test func theBrokerRefusesADefaultDeadlineOutsideTheProtocolsBounds() async throws {
            let cluster = try Cluster()
            for (name, extra) in [
                ("too-short", ["--deadline-ms", "5"]),
                ("too-long", ["--deadline-ms", "70000", "--hard-limit-ms", "80000"]),
                ("above-hard-limit", ["--deadline-ms", "3000", "--hard-limit-ms", "2000"]),
            ] {
                try cluster.start(
                    name, ["broker", "--frontend", cluster.frontend, "--backend", cluster.backend] + extra)
                #expect(await cluster.waitForExit(name, seconds: 20) == 1, "\(name)")
                #expect(cluster.log(name).contains("bad-configuration"), "\(name): \(cluster.log(name))")
            }
        }
    }
}
