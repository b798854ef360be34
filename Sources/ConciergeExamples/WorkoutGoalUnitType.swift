public import IntentKit

/// The unit of a workout goal (SiriKit's `INWorkoutGoalUnitType`).
public enum WorkoutGoalUnitType: String, IntentEnum {
    case unknown, inch, meter, foot, mile, yard, second, minute, hour, joule, kiloCalorie
}
