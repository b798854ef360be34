import ArgumentParser
import Foundation
import IntentPermissions
import ZeroMQ

/// `concierge permissions`: check a permissions file and show the identity a key maps to (`Docs/PERMISSIONS.md`).
struct PermissionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permissions",
        abstract: "Check a permissions file, or show the identity a CURVE key maps to.",
        discussion: """
            A permissions file names identities, the CURVE public keys each is known by, and the intent types \
            each may send and serve (Docs/PERMISSIONS.md, Schemas/json/permissions.schema.json). Exit status: 0 \
            on success, 1 with `concierge permissions: <code>: <what is wrong, and where>` on standard error. \
            Codes: permissions-unreadable, permissions-malformed, permissions-duplicate-key, permissions-unknown-key, permissions-reload-failed.
            """,
        subcommands: [Check.self, Who.self, Reload.self]
    )

    /// Reads a permissions file, or prints its error and exits with status 1.
    static func load(_ path: String) throws -> Permissions {
        do {
            return try Permissions.load(path: path)
        } catch {
            throw fail("\(error)")
        }
    }

    static func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("concierge permissions: \(message)\n".utf8))
        return ExitCode(1)
    }

    /// One identity's lists, a line each.
    static func describe(_ identity: PermissionIdentity) -> String {
        func list(_ name: String, _ access: AccessList) -> String {
            let allow = access.allow.isEmpty ? "nothing" : access.allow.map(\.description).joined(separator: " ")
            let deny = access.deny.isEmpty ? "" : " except " + access.deny.map(\.description).joined(separator: " ")
            return "  \(name): \(allow)\(deny)"
        }
        return """
            \(identity.name) (\(identity.keys.count) key\(identity.keys.count == 1 ? "" : "s"))
            \(list("send", identity.send))
            \(list("serve", identity.serve))
            """
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a permissions file and print what each identity may send and serve.",
            discussion: """
                The same checks the broker makes when it reads the file: the schema's rules, each naming the \
                first place wrong (e.g. identities.chat-bot.send.allow[0]), and no key listed for two identities.
                """
        )

        @Argument(help: "The permissions file (JSON).")
        var file: String

        func run() throws {
            let permissions = try PermissionsCommand.load(file)
            print("\(file): ok, \(permissions.identities.count) identities")
            for identity in permissions.identities { print(PermissionsCommand.describe(identity)) }
        }
    }

    struct Who: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the identity a CURVE public key maps to in a permissions file.",
            discussion: """
                KEY is a public key's 40 Z85 characters or a .pub file written by `concierge keygen`. Exit status \
                1 with permissions-unknown-key when no identity lists it.
                """
        )

        @Argument(help: "The key: 40 Z85 characters, or a .pub file.")
        var key: String

        @Option(name: .customLong("permissions"), help: "The permissions file (JSON).")
        var file: String

        func run() throws {
            let z85: String
            do {
                z85 =
                    key.utf8.count == 40
                    ? try CurvePublicKey(z85: key).z85 : try CurveKeyFile.readPublicKey(path: key).z85
            } catch {
                throw PermissionsCommand.fail("\(error)")
            }
            let permissions = try PermissionsCommand.load(file)
            guard let identity = permissions.identity(forKey: z85) else {
                throw PermissionsCommand.fail("permissions-unknown-key: no identity of \(file) lists the key \(z85)")
            }
            print(PermissionsCommand.describe(identity))
        }
    }

    struct Reload: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a broker's permissions file, then tell the broker to reread it (SIGHUP).",
            discussion: """
                FILE is the file the broker was started with (--permissions). It is checked first, as `check` \
                does: a file with an error is not signalled, and the broker keeps the permissions in force. \
                Connections stay up; requests already accepted go on; a registered worker that may no longer \
                serve one of its types is drained. The broker logs "permissions file reloaded" (or why it refused \
                the file, which then changes nothing).
                """
        )

        @Option(help: "The broker's process id.")
        var pid: Int32

        @Argument(help: "The broker's permissions file.")
        var file: String

        func validate() throws {
            guard pid > 0 else { throw ValidationError("--pid must be a process id above 0") }
        }

        func run() throws {
            let permissions = try PermissionsCommand.load(file)
            guard kill(pid, SIGHUP) == 0 else {
                throw PermissionsCommand.fail(
                    "permissions-reload-failed: cannot signal process \(pid): \(String(cString: strerror(errno)))")
            }
            print("\(file): \(permissions.identities.count) identities; sent SIGHUP to broker \(pid)")
        }
    }
}
