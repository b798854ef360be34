/// The definition a request was admitted under (`Schemas/PROTOCOL.md` section 5.18): its version and digest. Every
/// job of the request, and every turn of its conversation, runs on a worker serving this definition or a compatible
/// later one (``IntentWire/DefinitionCompatibility``).
struct DefinitionPin: Hashable {
    let version: Int
    let digest: String
}
