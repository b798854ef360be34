// Every frame carries the vocabulary's phases, outcomes and codes: a module that speaks the wire names them too.
@_exported public import IntentVocabulary
