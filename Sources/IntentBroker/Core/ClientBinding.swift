/// With permissions in force: the CURVE key a client routing id is bound to, and until when (monotonic
/// nanoseconds). Another identity's key using the id before then is refused `forbidden` (Docs/PERMISSIONS.md,
/// "Bound names").
struct ClientBinding {
    let key: [UInt8]
    var until: UInt64
}
