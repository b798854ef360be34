import IntentWire
import Testing

@Suite struct WireTextTests {
    @Test func displayCutsLongFramesAndRepairsInvalidBytes() {
        let long = [UInt8](repeating: 0x61, count: 100)
        #expect(long.withUnsafeBytes { WireText.display($0, limit: 10) } == "aaaaaaaaaa...")
        #expect([UInt8]([0x61, 0xFF]).withUnsafeBytes { WireText.display($0) } == "a\u{FFFD}")
    }
}
