public import IntentKit

/// Handles ``StartWorkoutIntent`` (the SiriKit guide's running-app example).
///
/// Resolution: `workoutName` missing -> `needsValue`; for an open-ended workout (`isOpenEnded` true) `goalValue` and
/// `workoutGoalUnitType` are `notRequired` (an open workout has no goal); a goal of zero or less is
/// `unsupported(goalValueNotPositive)`; a goal without a unit -> the unit `needsValue`. Other parameters get the
/// default resolution.
///
/// Confirm: an outdoor workout needs location services, which the demo device has off (``DemoData``), so it answers
/// `failureRequiringAppLaunch` with the user activity `com.example.concierge.noLocationAvailable`; otherwise `ready`.
/// Handle: `continueInApp` without a user activity, so the default one (carrying the interaction) is made.
public struct StartWorkoutHandler: IntentHandler {
    /// Unsupported reasons of the workout parameters.
    public enum UnsupportedReason: String, Sendable, CaseIterable {
        /// The goal is zero or negative.
        case goalValueNotPositive
    }

    /// The activity type of the user activity given when location services are unavailable.
    public static let noLocationActivityType = "com.example.concierge.noLocationAvailable"

    /// Creates a handler.
    public init() {}

    public func resolve(intent: StartWorkoutIntent, context: HandlerContext) async throws -> Resolutions<
        StartWorkoutIntent
    > {
        var resolutions = Resolutions<StartWorkoutIntent>()
        if intent.workoutName == nil { resolutions[\.workoutName] = .needsValue }
        if intent.isOpenEnded == true {
            resolutions[\.goalValue] = .notRequired
            resolutions[\.workoutGoalUnitType] = .notRequired
        } else if let goal = intent.goalValue {
            resolutions[\.goalValue] = goal > 0 ? .success(goal) : .unsupported(UnsupportedReason.goalValueNotPositive)
            if intent.workoutGoalUnitType == nil { resolutions[\.workoutGoalUnitType] = .needsValue }
        }
        return resolutions
    }

    public func confirm(intent: StartWorkoutIntent, context: HandlerContext) async throws -> ConfirmResponse<
        StartWorkoutIntent
    > {
        // If location services are not available, the user might need to change the type of workout.
        if intent.workoutLocationType == .outdoor, !DemoData.locationServicesEnabled {
            var userInfo: JSONObject = ["workoutLocationType": "outdoor"]
            if let name = intent.workoutName { userInfo["workoutName"] = .string(name) }
            return ConfirmResponse(
                code: .failureRequiringAppLaunch,
                userActivity: UserActivity(activityType: Self.noLocationActivityType, userInfo: userInfo),
                message: "location services are not available for an outdoor workout"
            )
        }
        return .ready
    }

    public func handle(intent: StartWorkoutIntent, context: HandlerContext) async throws -> HandleResponse<
        StartWorkoutIntent
    > {
        HandleResponse(code: .continueInApp)
    }
}
