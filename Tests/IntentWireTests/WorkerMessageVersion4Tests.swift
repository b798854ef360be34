import ConciergeJSON
import IntentWire
import Testing

/// Version 04 (PROTOCOL.md section 5.16): READY announces each intent type's definition; digests; endpoints.
@Suite struct WorkerMessageVersion4Tests {
    let decoder = WorkerMessageDecoder()
    let echo = #"{"intent": "Echo", "parameters": [], "version": 2}"#

    @Test func aVersion4ReadyCarriesEachTypesDefinition() throws {
        let command = try decoder.decode(
            frames("CIPW04", "READY", "4", "w", "Echo", echo, "Pay", #"{"intent":"Pay"}"#), isRegistered: false)
        guard case .ready(let ready) = command else {
            Issue.record("not a READY: \(command)")
            return
        }
        #expect(ready.version == 4)
        #expect(ready.intentTypes == [bytes("Echo"), bytes("Pay")])
        #expect(ready.definition(at: 0)?.version == 2)
        #expect(ready.definition(at: 1)?.version == 1)
        #expect(ready.definition(at: 0)?.json["intent"] == "Echo")
    }

    @Test func aVersion4ReadyThatIsNotTypeDefinitionPairsIsMalformed() {
        let bad: [[[UInt8]]] = [
            frames("CIPW04", "READY", "4", "w", "Echo"),  // no definition
            frames("CIPW04", "READY", "4", "w", "Echo", "[1]"),  // not an object
            frames("CIPW04", "READY", "4", "w", "Echo", "{"),  // not JSON
            frames("CIPW04", "READY", "4", "w", "Echo", #"{"intent": "Pay"}"#),  // another type's
            frames("CIPW04", "READY", "4", "w", "Echo", #"{"intent": "Echo", "version": 0}"#),
            frames("CIPW04", "READY", "4", "w", "Echo", echo, "Echo", #"{"intent": "Echo"}"#),  // two definitions
        ]
        for message in bad {
            let error = decoder.error(message, isRegistered: false)
            #expect(
                error?.code == .malformed && error?.check == 3, "\(message.map { String(decoding: $0, as: UTF8.self) })"
            )
        }
    }

    @Test func theSameTypeAndDefinitionTwiceIsOneType() throws {
        guard
            case .ready(let ready) = try decoder.decode(
                frames("CIPW04", "READY", "4", "w", "Echo", echo, "Echo", echo), isRegistered: false)
        else {
            Issue.record("not a READY")
            return
        }
        #expect(ready.intentTypes == [bytes("Echo")])
        #expect(ready.definitions.count == 1)
    }

    @Test func theDigestIsSHA256OfTheCanonicalForm() throws {
        // FIPS 180-4 examples.
        #expect(SHA256.digestString([]) == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.digestString(bytes("abc"))
                == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.digestString(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
                == "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let a = try AnnouncedDefinition(frame: bytes(#"{"intent":"Echo","parameters":[]}"#), intentType: "Echo")
        let b = try AnnouncedDefinition(frame: bytes(#"{ "parameters": [ ], "intent": "Echo" }"#), intentType: "Echo")
        let c = try AnnouncedDefinition(frame: bytes(#"{"intent":"Echo","parameters":[1]}"#), intentType: "Echo")
        #expect(a.digest == b.digest)
        #expect(a.digest != c.digest)
        #expect(a.digest == SHA256.digestString(bytes(#"{"intent":"Echo","parameters":[]}"#)))
    }

    @Test func aConnectedEndpointMayNotBeWhatOnlyABindTakes() throws {
        for binding in ["tcp://*:5556", "tcp://127.0.0.1:*", "tcp://127.0.0.1:0"] {
            #expect(throws: Never.self) { try EndpointSyntax.check(binding) }
            #expect(throws: EndpointSyntaxError.self) { try EndpointSyntax.check(binding, connecting: true) }
        }
        #expect(throws: Never.self) { try EndpointSyntax.check("tcp://127.0.0.1:5556", connecting: true) }
    }
}
