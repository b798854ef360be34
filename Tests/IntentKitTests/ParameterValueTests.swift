import ConciergeExamples
import ConciergeJSON
import Foundation
import IntentKit
import Testing

@Suite("Parameter values")
struct ParameterValueTests {
    @Test func everyValueTypeRoundTripsThroughJSON() throws {
        var probe = ProbeIntent()
        probe.identifier = "req-42"
        probe.text = "hi \"there\"\n"
        probe.count = -3
        probe.ratio = 0.25
        probe.flag = false
        probe.when = Date(timeIntervalSince1970: 1_795_341_600)
        probe.components = IntentDateComponents(
            year: 2026, month: 11, day: 22, hour: 10, minute: 0, timeZone: "Europe/Berlin")
        probe.price = CurrencyAmount("12.5", currencyCode: "EUR")
        probe.who = Person(displayName: "Anna", handle: "+49", handleType: .phoneNumber, customIdentifier: "c1")
        probe.place = Placemark(name: "Ferry Building", latitude: 37.7955, longitude: -122.3937)
        probe.level = .high
        probe.tags = ["a", "b"]
        probe.levels = [.low, .high]
        let text = probe.jsonValue.serializedString()
        let decoded = try ProbeIntent(jsonValue: JSONValue.parse(Array(text.utf8)))
        #expect(decoded == probe)
        #expect(ProbeIntent().jsonValue == ["type": "Probe", "parameters": [:]])
    }

    @Test func valuesUseTheDocumentedEncodings() throws {
        #expect(Date(timeIntervalSince1970: 1_795_341_600).intentJSON == "2026-11-22T10:00:00Z")
        #expect(CurrencyAmount("12.50", currencyCode: "EUR")?.intentJSON == ["amount": "12.5", "currencyCode": "EUR"])
        #expect(Person(displayName: "A").intentJSON == ["displayName": "A"])
        #expect(Placemark(latitude: 1, longitude: 2).intentJSON == ["latitude": 1.0, "longitude": 2.0])
        #expect(IntentDateComponents(hour: 9, minute: 30).intentJSON == ["hour": 9, "minute": 30])
        #expect(ProbeLevel.high.intentJSON == "high")
        #expect([ProbeLevel.low].intentJSON == ["low"])
        #expect(ProbeLevel.intentParameterType == .enumeration(name: "ProbeLevel", cases: ["low", "high"]))
        #expect([Person].intentParameterType == .list(.person))
    }

    @Test(
        "ISO 8601 dates decode with Z, offsets and fractions",
        arguments: [
            ("1970-01-01T00:00:00Z", 0.0), ("2000-03-01T00:00:00Z", 951_868_800),
            ("2026-11-22T10:00:00Z", 1_795_341_600),
            ("2026-11-22T11:30:00+01:30", 1_795_341_600), ("1969-12-31T23:59:59.5Z", -0.5),
        ]
    )
    func isoDatesDecode(text: String, seconds: Double) throws {
        let date = try Date(intentJSON: .string(text))
        #expect(date.timeIntervalSince1970 == seconds)
        #expect(try Date(intentJSON: date.intentJSON) == date)
    }

    static let malformedValues: [(JSONValue, ParameterType, String)] = [
        (JSONValue.string("2026-11-22 10:00"), ParameterType.date, "invalid-value"),
        (.string("2026-02-30T10:00:00Z"), .date, "invalid-value"),
        (.int(3), .string, "type-mismatch"),
        (.double(3.5), .integer, "type-mismatch"),
        (.string("3"), .double, "type-mismatch"),
        (["amount": 12.5, "currencyCode": "EUR"], .currencyAmount, "type-mismatch"),
        (["amount": "1e3", "currencyCode": "EUR"], .currencyAmount, "invalid-value"),
        (["amount": "12.5x", "currencyCode": "EUR"], .currencyAmount, "invalid-value"),
        (["amount": "12.50"], .currencyAmount, "missing-key"),
        (["amount": "12.50", "currencyCode": "eur"], .currencyAmount, "invalid-value"),
        (["amount": "12.50", "currencyCode": "EURO"], .currencyAmount, "invalid-value"),
        (["handle": "x"], .person, "missing-key"),
        (["displayName": "A", "handleType": "fax"], .person, "invalid-value"),
        (["displayName": "A", "nickname": "B"], .person, "unknown-key"),
        (["latitude": "north"], .placemark, "type-mismatch"),
        (["hour": "ten"], .dateComponents, "type-mismatch"),
        (.string("medium"), .enumeration(name: "ProbeLevel", cases: []), "invalid-value"),
        (["a", 1], .list(.string), "type-mismatch"),
    ]

    @Test("malformed values throw typed errors", arguments: malformedValues)
    func malformedValuesThrow(example: (JSONValue, ParameterType, String)) {
        let (value, type, code) = example
        #expect {
            switch type {
            case .date: _ = try Date(intentJSON: value)
            case .string: _ = try String(intentJSON: value)
            case .integer: _ = try Int(intentJSON: value)
            case .double: _ = try Double(intentJSON: value)
            case .currencyAmount: _ = try CurrencyAmount(intentJSON: value)
            case .person: _ = try Person(intentJSON: value)
            case .placemark: _ = try Placemark(intentJSON: value)
            case .dateComponents: _ = try IntentDateComponents(intentJSON: value)
            case .enumeration: _ = try ProbeLevel(intentJSON: value)
            case .list: _ = try [String](intentJSON: value)
            default: Issue.record("no case for \(type)")
            }
        } throws: { error in
            (error as? IntentValueError)?.code.rawValue == code
        }
    }

    @Test func listErrorsNameTheElement() {
        #expect {
            _ = try [String](intentJSON: ["a", "b", 3])
        } throws: { error in
            (error as? IntentValueError)?.message == "[2]: expected string, got integer"
        }
    }

    @Test func resolutionResultsRoundTripThroughJSON() throws {
        let anna = Person(displayName: "Anna", customIdentifier: "c1")
        let results: [ResolutionResult<Person>] = [
            .success(anna), .notRequired, .needsValue, .disambiguation([anna, Person(displayName: "B")]),
            .confirmationRequired(anna), .unsupported(reason: "noContactFound"), .unsupported(),
        ]
        for result in results {
            #expect(try ResolutionResult<Person>(jsonValue: result.jsonValue) == result)
        }
        #expect(
            ResolutionResult<Person>.unsupported(ContactUnsupportedReason.noContactFound)
                == .unsupported(reason: "noContactFound"))
        #expect(ResolutionResult<Int>.needsValue.jsonValue == ["kind": "needsValue"])
        #expect(
            ResolutionResult<Int>.disambiguation([1, 2]).jsonValue == ["kind": "disambiguation", "options": [1, 2]])
    }

    @Test func resolutionsAreTypedByKeyPath() {
        var resolutions = Resolutions<SendMessageIntent>()
        #expect(resolutions.isEmpty)
        resolutions[\.content] = .needsValue
        resolutions[\.attachments] = .success(["a.png"])
        #expect(resolutions[\.content] == .needsValue)
        #expect(resolutions[\.attachments] == .success(["a.png"]))
        #expect(resolutions[\.recipient] == nil)
        #expect(resolutions.kind(ofParameterNamed: "attachments") == .success)
        resolutions[\.content] = nil
        #expect(resolutions.kind(ofParameterNamed: "content") == nil)
    }
}
