import IntentWire

/// A definition of an intent type that registered `CIPW04` workers announced (`Schemas/PROTOCOL.md` section 5.16),
/// and which of them did. A type has one, or during a rolling upgrade one per version; it is forgotten when its last
/// worker leaves.
struct ServedDefinition {
    let definition: AnnouncedDefinition
    /// The registered workers that announced it, in registration order.
    var workers: [WorkerID]
}
