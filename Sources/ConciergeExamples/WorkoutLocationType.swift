public import IntentKit

/// Where a workout takes place (SiriKit's `INWorkoutLocationType`).
public enum WorkoutLocationType: String, IntentEnum {
    case unknown, outdoor, indoor
}
