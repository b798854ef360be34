import ArgumentParser
import Foundation
import ZeroMQ

/// `concierge keygen`: a new CURVE key pair in two files.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Generate a CURVE key pair: <out>.pub (public, share it) and <out>.secret (secret, mode 0600).",
        discussion: """
            Prints the public key (Z85) on standard output. Each file holds one 40-character Z85 key, after a \
            `#` comment line. List a client's or worker's .pub in the broker's --client-keys or --worker-keys \
            (a file with one key per line, or a directory of .pub files); give the broker's .pub to clients and \
            workers as --curve-server-key. Existing files are never replaced without --force.
            """
    )

    @Option(help: ArgumentHelp("Path of the key pair without extension, e.g. keys/broker.", valueName: "base"))
    var out: String

    @Flag(help: "Replace existing key files.")
    var force = false

    @Option(help: "A note written into the files' comment line (e.g. who the key is for).")
    var comment: String?

    func validate() throws {
        guard !out.isEmpty, !out.hasSuffix("/") else {
            throw ValidationError("--out takes a file path, e.g. keys/broker")
        }
        if let comment, comment.contains("\n") { throw ValidationError("--comment must be one line") }
    }

    func run() throws {
        let pair = try CurveKeyPair.generate()
        let (publicPath, secretPath) = try CurveKeyFile.write(pair, base: out, overwrite: force, comment: comment)
        FileHandle.standardError.write(
            Data("concierge keygen: wrote \(publicPath) (public) and \(secretPath) (secret, mode 0600)\n".utf8)
        )
        print(pair.publicKey.z85)
    }
}
