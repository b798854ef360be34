// Handler authors build response data and user activities from `JSONValue`, so importing IntentKit is enough.
@_exported public import ConciergeJSON
// The protocol's vocabulary is IntentKit's too: `IntentPhase` (`RequestPhase`), `JobOutcome` and the error codes
// (`IntentError.Code`, `WireErrorCode`) are defined once, in IntentVocabulary, and handler authors compare against
// their members without importing it themselves. The wire itself (frames, decoders, endpoints) is not theirs to see.
@_exported public import IntentVocabulary
