import IntentWire
import Testing

@Suite struct WireTextTests {
    func isValid(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { WireText.isValidUTF8($0) } }

    @Test func wellFormedUTF8IsValid() {
        for text in ["", "Echo", "Café", "Größe", "日本語", "🎉", "a\u{0}b", "\u{10FFFF}", "\u{D7FF}\u{E000}"] {
            #expect(isValid(bytes(text)), "\(text)")
        }
    }

    @Test func malformedUTF8IsInvalid() {
        let cases: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xE2, 0x82], [0xF0, 0x9F, 0x8E],
            [0xE2, 0x28, 0xA1], [0xF0, 0x9F, 0x8E, 0x28], [0x41, 0xC3],
        ]
        for bytes in cases {
            #expect(!isValid(bytes), "\(bytes)")
        }
    }

    @Test func agreesWithTheStandardLibraryOnEveryOneAndTwoByteSequence() {
        for first in 0...255 {
            let one = [UInt8(first)]
            #expect(isValid(one) == (String(validating: one, as: UTF8.self) != nil))
            for second in 0...255 {
                let two = [UInt8(first), UInt8(second)]
                if isValid(two) != (String(validating: two, as: UTF8.self) != nil) {
                    Issue.record("disagree on \(two)")
                }
            }
        }
    }

    @Test func agreesWithTheStandardLibraryOnThreeAndFourByteSequences() {
        var generator = SystemRandomNumberGenerator()
        let leads: [UInt8] = [0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5]
        for lead in leads {
            for second in stride(from: 0x70, through: 0xC8, by: 1) {
                for _ in 0..<8 {
                    let tail = (0..<2).map { _ in UInt8.random(in: 0x70...0xC8, using: &generator) }
                    for sequence in [[lead, UInt8(second), tail[0]], [lead, UInt8(second)] + tail] {
                        if isValid(sequence) != (String(validating: sequence, as: UTF8.self) != nil) {
                            Issue.record("disagree on \(sequence)")
                        }
                    }
                }
            }
        }
    }

    @Test func displayCutsLongFramesAndRepairsInvalidBytes() {
        let long = [UInt8](repeating: 0x61, count: 100)
        #expect(long.withUnsafeBytes { WireText.display($0, limit: 10) } == "aaaaaaaaaa...")
        #expect([UInt8]([0x61, 0xFF]).withUnsafeBytes { WireText.display($0) } == "a\u{FFFD}")
    }
}
