import ArgumentParser
import Foundation
import ZeroMQ

struct ScaleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "Resize a running pool, or print its status (`concierge scale --status`).",
        discussion: """
            Without --control, it finds the pool in this user's control directory ($\(PoolControlDirectory.environmentVariable), \
            else $XDG_RUNTIME_DIR/concierge, else /tmp/concierge-<uid>), where `concierge pool` and `concierge up` \
            started without --control listen: the one that answers there, or, when several do, it lists them and \
            exits 1 (`concierge scale: several-pools: ...`); none is `no-pool`, exit 1.
            """
    )

    @Option(
        help: ArgumentHelp(
            "The pool's control endpoint (default: the one pool running in this user's control directory).",
            valueName: "endpoint"))
    var control: String?

    @Flag(help: "Print the pool's size and worker process ids instead of resizing.")
    var status = false

    @Argument(help: "The new number of worker processes.")
    var size: Int?

    func validate() throws {
        guard status || size != nil else { throw ValidationError("give a size, or --status") }
    }

    func run() async throws {
        let control: String
        if let given = self.control {
            control = given
        } else {
            do {
                control = try PoolControlDirectory.singlePool()
            } catch {
                FileHandle.standardError.write(Data("concierge scale: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
        let context = ZMQContext()
        let socket = try ZMQSocket(context: context, type: .req)
        try socket.setOption(.receiveTimeout, 5000)
        try socket.connect(control)
        try socket.send(status ? "status" : "scale \(size!)", dontWait: false)
        guard let reply = try socket.receiveMultipart(dontWait: false), let first = reply.first else {
            throw ValidationError("no answer from \(control)")
        }
        print(String(decoding: first, as: UTF8.self))
        socket.close()
    }
}
