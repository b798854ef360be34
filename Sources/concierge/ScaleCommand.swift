import ArgumentParser
import ZeroMQ

struct ScaleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "Resize a running pool, or print its status (`concierge scale --status`)."
    )

    @Option(help: "The pool's control endpoint.")
    var control: String = Defaults.control

    @Flag(help: "Print the pool's size and worker process ids instead of resizing.")
    var status = false

    @Argument(help: "The new number of worker processes.")
    var size: Int?

    func validate() throws {
        guard status || size != nil else { throw ValidationError("give a size, or --status") }
    }

    func run() async throws {
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
