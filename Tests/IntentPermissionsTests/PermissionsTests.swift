import IntentPermissions
import IntentVocabulary
import Testing

/// Permissions files (`Docs/PERMISSIONS.md`): what an identity may send and serve (deny wins, patterns, phases),
/// keys mapped to identities, and every malformed document refused with its place named.
@Suite struct PermissionsTests {
    static let payments = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
    static let chat = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
    static let worker = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"

    static let document = """
        {
          "version": 1,
          "identities": {
            "payments-service": {
              "description": "sends payments, may only preview rides",
              "keys": ["\(payments)"],
              "send": {"allow": ["SendPayment", "RequestRide:resolve,confirm", "Echo"], "deny": ["Echo:handle"]}
            },
            "chat-bot": {
              "keys": ["\(chat)"],
              "send": {"allow": ["*"], "deny": ["SendPayment", "com.bank.*"]}
            },
            "payment-workers": {
              "keys": ["\(worker)"],
              "serve": {"allow": ["SendPayment", "com.bank.*"], "deny": ["com.bank.internal.*"]}
            }
          }
        }
        """

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func keysMapToTheirIdentities() throws {
        let permissions = try Permissions.parse(Self.bytes(Self.document))
        #expect(permissions.identities.map(\.name) == ["payments-service", "chat-bot", "payment-workers"])
        #expect(permissions.identity(forKey: Self.payments)?.name == "payments-service")
        #expect(permissions.identity(forKey: Self.worker)?.name == "payment-workers")
        #expect(permissions.identity(forKey: String(repeating: "a", count: 40)) == nil)
    }

    @Test func whatAnIdentityMaySendDenyWinningOverAllow() throws {
        let permissions = try Permissions.parse(Self.bytes(Self.document))
        let payments = try #require(permissions.identity(named: "payments-service")).send
        #expect(payments.permits(type: Self.bytes("SendPayment"), phase: .handle))
        #expect(payments.permits(type: Self.bytes("RequestRide"), phase: .resolve))
        #expect(payments.permits(type: Self.bytes("RequestRide"), phase: .confirm))
        #expect(!payments.permits(type: Self.bytes("RequestRide"), phase: .handle))
        #expect(!payments.permits(type: Self.bytes("RequestRide"), phases: [.resolve, .confirm, .handle]))
        #expect(payments.permits(type: Self.bytes("Echo"), phase: .confirm))
        #expect(!payments.permits(type: Self.bytes("Echo"), phase: .handle))  // deny wins
        #expect(!payments.permits(type: Self.bytes("SendMessage"), phase: .resolve))  // not allowed at all
        // Without a "serve" list, nothing to serve.
        let serve = try #require(permissions.identity(named: "payments-service")).serve
        #expect(!serve.permitsWhole(type: Self.bytes("SendPayment")))

        let chat = try #require(permissions.identity(named: "chat-bot")).send
        #expect(chat.permits(type: Self.bytes("SendMessage"), phase: .handle))
        #expect(chat.permits(type: Self.bytes("com.example.Thing"), phase: .handle))
        #expect(!chat.permits(type: Self.bytes("SendPayment"), phase: .resolve))
        #expect(!chat.permits(type: Self.bytes("com.bank.Transfer"), phase: .resolve))
    }

    @Test func whatAWorkerMayServe() throws {
        let permissions = try Permissions.parse(Self.bytes(Self.document))
        let serve = try #require(permissions.identity(named: "payment-workers")).serve
        #expect(serve.permitsWhole(type: Self.bytes("SendPayment")))
        #expect(serve.permitsWhole(type: Self.bytes("com.bank.Transfer")))
        #expect(!serve.permitsWhole(type: Self.bytes("com.bank.internal.Audit")))
        #expect(!serve.permitsWhole(type: Self.bytes("Echo")))
    }

    @Test(arguments: [
        ("*", "Anything", true), ("Send*", "SendPayment", true), ("Send*", "Send", true), ("Send*", "ResendX", false),
        ("*Payment", "SendPayment", true), ("*Payment", "PaymentX", false), ("a*b*c", "abc", true),
        ("a*b*c", "aXbYc", true), ("a*b*c", "aXcYb", false), ("a*b*c", "ab", false), ("*.*", "com.x", true),
        ("*.*", "comx", false), ("Echo", "Echo", true), ("Echo", "Echo2", false), ("**", "", true),
    ])
    func wildcardsMatchAnyRunOfCharacters(pattern: String, type: String, matches: Bool) throws {
        #expect(try IntentPattern(parsing: pattern).matches(type: Self.bytes(type)) == matches)
    }

    @Test(arguments: ["", ":handle", "Send Payment", "Echo:", "Echo:lifecycle", "Echo:resolve,", "Echo:Handle", "É"])
    func entriesThatAreNotPatternsAreRefused(entry: String) {
        #expect(throws: PatternError.self) { try IntentPattern(parsing: entry) }
    }

    @Test(arguments: [
        ("[]", "the document must be an object"),
        (#"{"identities": {}}"#, "version must be 1"),
        (#"{"version": 2, "identities": {}}"#, "version must be 1"),
        (#"{"version": 1}"#, "identities must be an object of identities by name"),
        (#"{"version": 1, "identities": {}, "extra": 1}"#, "the document unknown key \"extra\""),
        (#"{"version": 1, "identities": {"a b": {"keys": ["K"]}}}"#, "identities.a b an identity's name is 1 to 64"),
        (#"{"version": 1, "identities": {"a": {"keys": "K"}}}"#, "identities.a.keys must be a list"),
        (
            #"{"version": 1, "identities": {"a": {"keys": ["short"]}}}"#,
            "identities.a.keys[0] must be a CURVE public key"
        ),
        (
            #"{"version": 1, "identities": {"a": {"keys": ["\#(PermissionsTests.payments)"], "send": []}}}"#,
            "identities.a.send must be an object"
        ),
        (
            #"{"version": 1, "identities": {"a": {"keys": ["\#(PermissionsTests.payments)"], "sends": {}}}}"#,
            "identities.a unknown key \"sends\""
        ),
        (
            #"{"version": 1, "identities": {"a": {"keys": ["\#(PermissionsTests.payments)"], "serve": {"allow": ["Echo:nope"]}}}}"#,
            "identities.a.serve.allow[0] \"Echo:nope\": \"nope\" is not a phase"
        ),
        (
            #"{"version": 1, "identities": {"a": {"keys": ["\#(PermissionsTests.payments)"], "send": {"deny": [1]}}}}"#,
            "identities.a.send.deny[0] must be a string"
        ),
        ("not json", "not JSON"),
    ])
    func malformedDocumentsAreRefusedNamingThePlace(document: String, message: String) {
        do {
            _ = try Permissions.parse(Self.bytes(document))
            Issue.record("accepted: \(document)")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }

    @Test func aKeyListedForTwoIdentitiesIsRefused() {
        let document = """
            {"version": 1, "identities": {"a": {"keys": ["\(Self.payments)"]}, "b": {"keys": ["\(Self.chat)", "\(Self.payments)"]}}}
            """
        #expect(
            throws: PermissionsError(
                code: .duplicateKey, message: "the key \(Self.payments) is listed for both \"a\" and \"b\"")
        ) {
            try Permissions.parse(Self.bytes(document))
        }
    }

    @Test func aThousandIdentitiesAreLookedUpByKey() throws {
        // Keys of 40 Z85 characters, distinct: the index in base 85, padded.
        let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#")
        func key(_ number: Int) -> String {
            var digits: [Character] = []
            var rest = number
            for _ in 0..<40 {
                digits.append(alphabet[rest % 85])
                rest /= 85
            }
            return String(digits)
        }
        let identities = (0..<1000).map { index in
            PermissionIdentity(
                name: "service-\(index)", keys: [key(index)],
                send: AccessList(allow: [try! IntentPattern(parsing: "Type\(index)")]))
        }
        let permissions = try Permissions(identities: identities)
        #expect(permissions.identity(forKey: key(731))?.name == "service-731")
        #expect(
            permissions.identity(forKey: key(731))?.send.permits(type: Self.bytes("Type731"), phase: .handle) == true)
        #expect(
            permissions.identity(forKey: key(731))?.send.permits(type: Self.bytes("Type732"), phase: .handle) == false)
    }
}
