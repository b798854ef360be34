import ConciergeJSON
import Testing

@Suite("Accessors")
struct AccessorTests {
    static let samples: [JSONValue] = [
        .null, .bool(true), .int(7), .double(2.5), .string("s"), .array([1]), .object(["k": 1]),
    ]

    @Test func keySubscriptReturnsMemberOnlyForObjects() {
        let value: JSONValue = ["a": 1, "n": nil]
        #expect(value["a"] == .int(1))
        #expect(value["n"] == .some(.null))
        #expect(value["missing"] == nil)
        #expect(JSONValue.array(["a"])["a"] == nil)
        #expect(JSONValue.string("a")["a"] == nil)
    }

    @Test func indexSubscriptReturnsElementOnlyForArraysInBounds() {
        let value: JSONValue = [10, "x"]
        #expect(value[0] == .int(10))
        #expect(value[1] == .string("x"))
        #expect(value[2] == nil)
        #expect(value[-1] == nil)
        #expect(JSONValue.object(["0": 1])[0] == nil)
    }

    @Test func isNullOnlyForNull() {
        #expect(JSONValue.null.isNull)
        for sample in Self.samples.dropFirst() { #expect(!sample.isNull) }
    }

    @Test func boolValueOnlyForBools() {
        #expect(JSONValue.bool(true).boolValue == true)
        #expect(JSONValue.bool(false).boolValue == false)
        #expect(JSONValue.int(1).boolValue == nil)
        #expect(JSONValue.string("true").boolValue == nil)
        #expect(JSONValue.null.boolValue == nil)
    }

    @Test func int64ValueForIntsAndIntegralDoublesInRange() {
        #expect(JSONValue.int(.min).int64Value == .min)
        #expect(JSONValue.int(5).int64Value == 5)
        #expect(JSONValue.double(2.0).int64Value == 2)
        #expect(JSONValue.double(-0.0).int64Value == 0)
        #expect(JSONValue.double(-9_223_372_036_854_775_808.0).int64Value == .min)
        #expect(JSONValue.double(9_223_372_036_854_774_784.0).int64Value == 9_223_372_036_854_774_784)
    }

    @Test func int64ValueIsNilForFractionsOutOfRangeAndNonNumbers() {
        #expect(JSONValue.double(2.5).int64Value == nil)
        #expect(JSONValue.double(9_223_372_036_854_775_808.0).int64Value == nil)
        #expect(JSONValue.double(-9_223_372_036_854_777_856.0).int64Value == nil)
        #expect(JSONValue.double(.nan).int64Value == nil)
        #expect(JSONValue.double(.infinity).int64Value == nil)
        #expect(JSONValue.string("5").int64Value == nil)
        #expect(JSONValue.bool(true).int64Value == nil)
    }

    @Test func intValueMirrorsInt64Value() {
        #expect(JSONValue.int(42).intValue == 42)
        #expect(JSONValue.double(-7.0).intValue == -7)
        #expect(JSONValue.double(0.5).intValue == nil)
        #expect(JSONValue.null.intValue == nil)
    }

    @Test func doubleValueForDoublesAndConvertedInts() {
        #expect(JSONValue.double(2.5).doubleValue == 2.5)
        #expect(JSONValue.int(-3).doubleValue == -3.0)
        #expect(JSONValue.int(.max).doubleValue == 9_223_372_036_854_775_808.0)
        #expect(JSONValue.string("2.5").doubleValue == nil)
        #expect(JSONValue.null.doubleValue == nil)
    }

    @Test func stringValueOnlyForStrings() {
        #expect(JSONValue.string("é").stringValue == "é")
        #expect(JSONValue.int(1).stringValue == nil)
        #expect(JSONValue.null.stringValue == nil)
    }

    @Test func arrayValueOnlyForArrays() {
        #expect(JSONValue.array([1, "a"]).arrayValue == [.int(1), .string("a")])
        #expect(JSONValue.object([:]).arrayValue == nil)
        #expect(JSONValue.string("[]").arrayValue == nil)
    }

    @Test func objectValueOnlyForObjects() {
        #expect(JSONValue.object(["a": 1]).objectValue == ["a": .int(1)])
        #expect(JSONValue.array([]).objectValue == nil)
        #expect(JSONValue.null.objectValue == nil)
    }

    @Test func eachAccessorMatchesExactlyTheExpectedKinds() {
        for sample in Self.samples {
            #expect((sample.boolValue != nil) == (sample == .bool(true)))
            #expect((sample.stringValue != nil) == (sample == .string("s")))
            #expect((sample.arrayValue != nil) == (sample == .array([1])))
            #expect((sample.objectValue != nil) == (sample == .object(["k": 1])))
            #expect((sample.doubleValue != nil) == (sample == .int(7) || sample == .double(2.5)))
            #expect((sample.int64Value != nil) == (sample == .int(7)))
        }
    }

    @Test func chainedLookupsReachNestedValues() throws {
        let value = try JSONValue.parse(#"{"a":{"b":[{"c":"deep"}]}}"#)
        #expect(value["a"]?["b"]?[0]?["c"]?.stringValue == "deep")
        #expect(value["a"]?["x"]?[0]?["c"] == nil)
    }
}
