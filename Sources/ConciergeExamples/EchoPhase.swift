public import IntentKit

/// The phase in which ``EchoHandler`` waits, burns CPU and fails.
public enum EchoPhase: String, IntentEnum {
    case resolve, confirm, handle
}
