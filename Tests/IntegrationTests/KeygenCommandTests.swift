import ConciergeTestKit
import Foundation
import Testing
import ZeroMQ

extension EndToEnd {
    /// `concierge keygen`: loadable key files, a private secret, and no accidental overwrite.
    @Suite(.serialized) struct KeygenCommandTests {
        @Test func keygenWritesLoadableKeysWithAPrivateSecretAndRefusesToOverwrite() throws {
            let cluster = try Cluster()
            let base = cluster.directory.path + "/keys/broker"
            let first = try runConcierge(["keygen", "--out", base, "--comment", "test broker"])
            #expect(first.status == 0, "\(first.error)")
            let printed = first.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let publicKey = try CurveKeyFile.readPublicKey(path: base + ".pub")
            let secretKey = try CurveKeyFile.readSecretKey(path: base + ".secret")
            #expect(printed == publicKey.z85)
            #expect(try secretKey.publicKey() == publicKey)
            let attributes = try FileManager.default.attributesOfItem(atPath: base + ".secret")
            #expect((attributes[.posixPermissions] as? Int ?? -1) & 0o777 == 0o600)
            #expect(try String(contentsOfFile: base + ".pub", encoding: .utf8).contains("# Concierge CURVE public key"))

            let again = try runConcierge(["keygen", "--out", base])
            #expect(again.status != 0)
            #expect(again.error.contains("key-file-exists"))
            #expect(try CurveKeyFile.readSecretKey(path: base + ".secret") == secretKey)

            let forced = try runConcierge(["keygen", "--out", base, "--force"])
            #expect(forced.status == 0)
            #expect(try CurveKeyFile.readPublicKey(path: base + ".pub") != publicKey)
            #expect(
                forced.output.trimmingCharacters(in: .whitespacesAndNewlines)
                    == (try CurveKeyFile.readPublicKey(path: base + ".pub")).z85)
        }
    }
}
