import ConciergeTestKit
import Foundation
import Testing

extension EndToEnd {
    /// The private PostgreSQL server tests of durable brokers run against: it starts from Debian's
    /// packages, answers SQL, keeps a committed row across a restart of the server, and stops by its pid.
    @Suite(.serialized) struct PostgresServerTests {
        @Test func aPrivateServerStartsAnswersAndStops() throws {
            let server = try PostgresServer()
            #expect(server.pid > 0)
            #expect(try server.sql("SELECT 40 + 2") == "42")
            try server.sql("CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
            let pid = server.pid
            server.stop()
            #expect(server.pid == 0)
            #expect(kill(pid, 0) != 0)  // gone
            #expect(throws: (any Error).self) { try server.sql("SELECT 1") }
            try server.start()
            #expect(try server.sql("SELECT x FROM t") == "7")
        }
    }
}
