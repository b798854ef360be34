public import IntentKit

/// Start a workout (SiriKit's `INStartWorkoutIntent`).
public struct StartWorkoutIntent: Intent, Hashable {
    public static let intentType = "StartWorkout"
    public static let intentDescription = "Start a workout, optionally with a goal."
    public static let parameters: [IntentParameter<StartWorkoutIntent>] = [
        .init("workoutName", \.workoutName, required: true, description: "The kind of workout, e.g. run or yoga."),
        .init(
            "goalValue", \.goalValue,
            description: "The goal, in workoutGoalUnitType units; not required for open-ended workouts.",
            unsupportedReasons: StartWorkoutHandler.UnsupportedReason.goalValueReasons
        ),
        .init("workoutGoalUnitType", \.workoutGoalUnitType, description: "The unit of goalValue."),
        .init(
            "workoutLocationType", \.workoutLocationType,
            description: "Indoor or outdoor; outdoor workouts need location services."
        ),
        .init("isOpenEnded", \.isOpenEnded, description: "Whether the workout has no goal."),
    ]

    public var identifier: String?
    /// The kind of workout.
    public var workoutName: String?
    /// The goal.
    public var goalValue: Double?
    /// The unit of the goal.
    public var workoutGoalUnitType: WorkoutGoalUnitType?
    /// Indoor or outdoor.
    public var workoutLocationType: WorkoutLocationType?
    /// Whether the workout has no goal.
    public var isOpenEnded: Bool?

    public init() {}

    /// Creates an intent with the given parameters.
    public init(
        workoutName: String? = nil,
        goalValue: Double? = nil,
        workoutGoalUnitType: WorkoutGoalUnitType? = nil,
        workoutLocationType: WorkoutLocationType? = nil,
        isOpenEnded: Bool? = nil
    ) {
        self.workoutName = workoutName
        self.goalValue = goalValue
        self.workoutGoalUnitType = workoutGoalUnitType
        self.workoutLocationType = workoutLocationType
        self.isOpenEnded = isOpenEnded
    }
}
