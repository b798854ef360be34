// Fuzz target: the JSON parser and writer every body goes through (ConciergeJSON).
//
// Input: the bytes of a JSON document.
//
// Invariants: parsing never traps and reports an offset inside the input; a parsed value serializes to text that
// parses back to an equal value and serializes to the same bytes (the writer is canonical); locating a top-level
// member finds the bytes of its value; appending a member to the document's own bytes (as the worker does for its
// output) gives a document that parses to the value with that member added.

import ConciergeJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONValue(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let value: JSONValue
    do {
        value = try JSONValue.parse(input)
    } catch {
        invariant(error.offset >= 0 && error.offset <= size, "offset \(error.offset) of \(size)")
        return 0
    }
    // Round trip.
    let text = value.serialized()
    guard let again = try? JSONValue.parse(text) else {
        invariant(false, "serialized text does not parse: \(String(decoding: text, as: UTF8.self))")
        return 0
    }
    invariant(again == value, "round trip changed the value: \(String(decoding: text, as: UTF8.self))")
    invariant(again.serialized() == text, "serialization is not canonical")
    invariant(String(decoding: text, as: UTF8.self) == value.description, "description")

    guard case .object(let members) = value else { return 0 }
    // Locating a member, as the worker does for "intent".
    for key in members.keys.prefix(3) {
        guard let (located, range) = try? JSONValue.parse(input, locatingMember: key) else {
            invariant(false, "parse(locatingMember:) failed where parse succeeded")
            return 0
        }
        invariant(located == value, "parse(locatingMember:) gave another value")
        guard let range else {
            invariant(false, "member \(key) not located")
            return 0
        }
        invariant(range.lowerBound >= 0 && range.upperBound <= size, "range out of the input")
        invariant((try? JSONValue.parse(Array(input[range]))) == members[key], "located bytes are not the value")
    }
    // Appending a member to the bytes, as the worker adds its phase's output.
    let key = "zz\u{1}\"new"
    guard members[key] == nil else { return 0 }
    guard let appended = JSONValue.appendingMember(key, to: input, writeValue: { $0 += Array("[1,\"x\"]".utf8) })
    else {
        invariant(false, "appendingMember refused an object")
        return 0
    }
    var expected = members
    expected[key] = .array([.int(1), .string("x")])
    invariant(
        (try? JSONValue.parse(appended)) == .object(expected),
        "appended document: \(String(decoding: appended, as: UTF8.self))"
    )
    return 0
}
