public import IntentVocabulary

/// A phase of the intent lifecycle: resolve each parameter (``IntentHandler/resolve(intent:context:)``), then
/// confirm (``IntentHandler/confirm(intent:context:)``), then handle (``IntentHandler/handle(intent:context:)``).
///
/// The protocol's `RequestPhase`, under the name handler authors know. A job runs one of `resolve`, `confirm` and
/// `handle`; `lifecycle` names the whole sequence (``HandlerProvider/runLifecycle(intentType:body:context:)``).
public typealias IntentPhase = RequestPhase
