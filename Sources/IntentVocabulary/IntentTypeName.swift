/// The characters of an intent type's name (`Schemas/PROTOCOL.md` section 4.8, check 12): `[A-Za-z0-9_.-]`.
public enum IntentTypeName {
    /// Whether `byte` may appear in an intent type's name.
    @inlinable
    public static func isValidByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
