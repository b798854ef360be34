import ConciergeTestKit
import Foundation
import IntentBroker
import Testing
import ZeroMQ

extension EndToEnd {
    /// Secure by default: without CURVE the broker binds only loopback TCP, `ipc://` and `inproc://`, unless told
    /// it may be insecure; with CURVE, anything.
    @Suite(.serialized) struct EndpointSecurityTests {
        @Test(arguments: [
            ("tcp://127.0.0.1:5555", true), ("tcp://127.1.2.3:*", true), ("tcp://[::1]:5555", true),
            ("tcp://localhost:5555", true), ("tcp://LOCALHOST:5555", true), ("tcp://[::ffff:127.0.0.1]:5555", true),
            ("ipc:///tmp/concierge.sock", true), ("inproc://broker", true),
            ("tcp://*:5555", false), ("tcp://0.0.0.0:5555", false), ("tcp://eth0:5555", false),
            ("tcp://lo:5555", false),
            ("tcp://10.1.2.3:5555", false), ("tcp://128.0.0.1:5555", false), ("tcp://[::]:5555", false),
            ("tcp://[2001:db8::1]:5555", false), ("tcp://127.0.0.1", false), ("ws://127.0.0.1:5555", false),
            ("pgm://eth0;239.192.1.1:5555", false), ("tcp://example.com:5555", false),
        ])
        func loopbackAndIPCAreLocalEverythingElseIsNot(endpoint: String, local: Bool) {
            #expect(BrokerConfiguration.isLocalEndpoint(endpoint) == local)
        }

        @Test func reachableEndpointsNeedCurveOrAnExplicitOverride() async throws {
            let cluster = try Cluster()
            let keys = try CurveTestKeys(directory: cluster.directory)
            // `tcp://lo:*` is an interface name, so the policy counts it as reachable, yet it binds loopback only:
            // the override can be exercised without exposing anything.
            for (frontend, backend) in [("tcp://lo:*", cluster.backend), (cluster.frontend, "tcp://lo:*")] {
                let error = #expect(throws: BrokerError.self) {
                    _ = try Broker(configuration: .init(frontendEndpoint: frontend, backendEndpoint: backend))
                }
                #expect(error?.code == .insecureEndpoint)
                #expect(error?.message.contains("tcp://lo:*") == true)
            }
            let insecure = try InProcessBroker(curve: nil) {
                $0.frontendEndpoint = "tcp://lo:*"
                $0.allowInsecureEndpoints = true
            }
            #expect(insecure.broker.frontendEndpoint.hasPrefix("tcp://127.0.0.1:"))
            _ = try await insecure.stop()
            let curve = try InProcessBroker(curve: keys.brokerConfiguration) { $0.frontendEndpoint = "tcp://lo:*" }
            #expect(curve.broker.frontendEndpoint.hasPrefix("tcp://127.0.0.1:"))
            _ = try await curve.stop()
        }

        @Test func theCommandLineRefusesReachableEndpointsUnlessInsecure() async throws {
            let cluster = try Cluster()
            for (name, arguments) in [
                ("broker-wildcard", ["broker", "--frontend", "tcp://*:5555", "--backend", cluster.backend]),
                ("broker-any", ["broker", "--frontend", cluster.frontend, "--backend", "tcp://0.0.0.0:5556"]),
                ("broker-nic", ["broker", "--frontend", "tcp://eth0:5555", "--backend", cluster.backend]),
                ("broker-lan", ["broker", "--frontend", "tcp://10.1.2.3:5555", "--backend", cluster.backend]),
                (
                    "up-any",
                    [
                        "up", "--frontend", "tcp://0.0.0.0:5555", "--backend", cluster.backend, "--control",
                        cluster.control,
                    ]
                ),
            ] {
                try cluster.start(name, arguments)
                #expect(await cluster.waitForExit(name, seconds: 10) == 1, "\(name)")
                #expect(cluster.log(name).contains("insecure-endpoint"), "\(name): \(cluster.log(name))")
            }
            try cluster.start(
                "broker-insecure", ["broker", "--frontend", "tcp://lo:*", "--backend", cluster.backend, "--insecure"]
            )
            try? await waitUntil("the broker is ready", poll: .milliseconds(100)) {
                cluster.log("broker-insecure").contains("broker ready")
            }
            #expect(cluster.log("broker-insecure").contains("broker ready"))
            cluster.signal("broker-insecure", SIGTERM)
            #expect(await cluster.waitForExit("broker-insecure") == 0)
        }
    }
}
