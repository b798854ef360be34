import Foundation
import Testing
import ZeroMQ

/// Key files and allowlists: the format, file modes, refusing to overwrite, and clear errors for bad files.
@Suite struct CurveKeyFileTests {
    let directory: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("concierge-keys-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func write(_ text: String, _ name: String) throws -> String {
        let path = directory + "/" + name
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1) & 0o777
    }

    @Test func writtenKeyPairsReadBackWithPrivateSecretFiles() throws {
        let pair = try CurveKeyPair.generate()
        let (publicPath, secretPath) = try CurveKeyFile.write(pair, base: directory + "/sub/dir/broker")
        #expect(publicPath == directory + "/sub/dir/broker.pub")
        #expect(secretPath == directory + "/sub/dir/broker.secret")
        #expect(try mode(secretPath) == 0o600)
        #expect(try mode(publicPath) == 0o644)
        #expect(try mode(directory + "/sub/dir") == 0o700)
        #expect(try CurveKeyFile.readPublicKey(path: publicPath) == pair.publicKey)
        #expect(try CurveKeyFile.readSecretKey(path: secretPath) == pair.secretKey)
        // The public key file is also a one-key allowlist.
        #expect(try CurveKeyFile.readAllowlist(path: publicPath) == [pair.publicKey])
    }

    @Test func existingKeyFilesAreNotOverwrittenUnlessAsked() throws {
        let first = try CurveKeyPair.generate()
        let (_, secretPath) = try CurveKeyFile.write(first, base: directory + "/w")
        let second = try CurveKeyPair.generate()
        let error = #expect(throws: CurveKeyError.self) { try CurveKeyFile.write(second, base: directory + "/w") }
        #expect(error?.code == .fileExists)
        #expect(try CurveKeyFile.readSecretKey(path: secretPath) == first.secretKey)
        // Overwriting resets a loosened mode to 0600.
        chmod(secretPath, 0o644)
        try CurveKeyFile.write(second, base: directory + "/w", overwrite: true)
        #expect(try CurveKeyFile.readSecretKey(path: secretPath) == second.secretKey)
        #expect(try mode(secretPath) == 0o600)
    }

    @Test func allowlistFilesTakeCommentsBlankLinesAndNotesAfterKeys() throws {
        let keys = try (0..<3).map { _ in try CurveKeyPair.generate().publicKey }
        let text = """
            # clients of the payments service

            \(keys[0].z85)
              \(keys[1].z85)   # alice's laptop\r
            #\(keys[2].z85)
            \t\(keys[1].z85)
            #
            """
        let path = try write(text, "clients.txt")
        // The commented-out key is not listed; a key listed twice counts once.
        #expect(try CurveKeyFile.readAllowlist(path: path) == [keys[0], keys[1]])
    }

    @Test func allowlistDirectoriesReadEveryPubFileAndNothingElse() throws {
        let listed = try (0..<2).map { _ in try CurveKeyPair.generate() }
        try CurveKeyFile.write(listed[0], base: directory + "/workers/a")
        try CurveKeyFile.write(listed[1], base: directory + "/workers/b")
        _ = try write("not a key at all", "workers/README")
        #expect(try CurveKeyFile.readAllowlist(path: directory + "/workers") == Set(listed.map(\.publicKey)))
    }

    @Test func malformedFilesGiveTheFileTheLineAndAStableCode() throws {
        let valid = try CurveKeyPair.generate().publicKey.z85
        let cases: [(String, CurveKeyError.Code, String)] = [
            (
                "# one key\n\(valid)\n\(valid.dropLast(3))\n", .malformedKey,
                ":3: a CURVE key is 40 Z85 characters, not 37"
            ),
            ("\(valid.dropLast())'\n", .malformedKey, ":1: a CURVE key is Z85 text; \"'\" is not a Z85 character"),
            ("-----BEGIN PRIVATE KEY-----\n", .malformedKey, ":1:"),
            ("# only a comment\n\n", .noKey, "no public key"),
            ("\(valid)\n\(valid)\n", .tooManyKeys, "2 keys"),
        ]
        for (index, (text, code, message)) in cases.enumerated() {
            let path = try write(text, "bad-\(index).pub")
            let error = #expect(throws: CurveKeyError.self) { try CurveKeyFile.readPublicKey(path: path) }
            #expect(error?.code == code, "case \(index)")
            #expect(error?.message.contains(path) == true, "case \(index): \(String(describing: error))")
            #expect(error?.message.contains(message) == true, "case \(index): \(String(describing: error))")
        }
        let missing = #expect(throws: CurveKeyError.self) {
            try CurveKeyFile.readSecretKey(path: directory + "/nope.secret")
        }
        #expect(missing?.code == .unreadable)
        #expect(missing?.message.contains("No such file") == true)
        let empty = try write("# nobody\n", "empty.txt")
        let noKeys = #expect(throws: CurveKeyError.self) { try CurveKeyFile.readAllowlist(path: empty) }
        #expect(noKeys?.code == .noKey)
        try FileManager.default.createDirectory(atPath: directory + "/none", withIntermediateDirectories: true)
        let emptyDirectory = #expect(throws: CurveKeyError.self) {
            try CurveKeyFile.readAllowlist(path: directory + "/none")
        }
        #expect(emptyDirectory?.code == .noKey)
    }
}
