// Handler authors build response data and user activities from `JSONValue`, so importing IntentKit is enough.
@_exported public import ConciergeJSON
// The protocol's vocabulary is IntentKit's too: `IntentPhase` (`RequestPhase`), `JobOutcome` and the error codes
// (`IntentError.Code`, `WireErrorCode`) are defined once, in IntentWire, and handler authors compare against their
// members without importing IntentWire themselves.
@_exported public import IntentWire
