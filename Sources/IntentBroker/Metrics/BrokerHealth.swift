import IntentWire
import Synchronization

/// Whether a broker is live and ready, for `/livez` and `/readyz` (`Docs/OPERATIONS.md`), readable from any thread:
/// the loop stamps it as it turns and as its role changes, and a check reads a few atomics (it never waits on the
/// loop).
///
/// - Live: the loop turned within ``livenessWindow`` (it wakes at least once a second, standing by or not). A stuck
///   loop is not live, and restarting the process may help.
/// - Ready: bound (not standing by), its journal available (if it keeps one), and at least one worker registered.
public final class BrokerHealth: Sendable {
    /// What the broker is doing, as far as readiness goes.
    public enum Role: UInt8, Sendable, CustomStringConvertible {
        case starting, standingBy, active, unavailable, stopping

        public var description: String {
            switch self {
            case .starting: "starting"
            case .standingBy: "standing by: another broker is active on the journal"
            case .active: "active"
            case .unavailable: "the journal's database is unavailable"
            case .stopping: "stopping"
            }
        }
    }

    /// A check's answer: healthy or not, and one line saying why.
    public struct Report: Sendable, Equatable {
        public var isHealthy: Bool
        public var detail: String
    }

    /// How long the loop may go without turning and still count as live.
    public static let livenessWindow: UInt64 = 5_000_000_000

    private let lastTurn = Atomic<UInt64>(MonotonicTime.now())
    private let role = Atomic<UInt8>(Role.starting.rawValue)
    private let workers = Atomic<Int>(0)

    init() {}

    func turned(_ now: UInt64) { lastTurn.store(now, ordering: .relaxed) }
    func set(_ role: Role) { self.role.store(role.rawValue, ordering: .relaxed) }
    func set(workers: Int) { self.workers.store(workers, ordering: .relaxed) }

    /// The role now.
    public var currentRole: Role { Role(rawValue: role.load(ordering: .relaxed)) ?? .starting }

    /// `/livez`: the loop turned recently.
    public func liveness() -> Report { liveness(now: MonotonicTime.now()) }

    func liveness(now: UInt64) -> Report {
        let last = lastTurn.load(ordering: .relaxed)
        let age = now > last ? now - last : 0
        if age > Self.livenessWindow {
            return Report(isHealthy: false, detail: "the broker's loop has not turned for \(age / 1_000_000) ms")
        }
        return Report(isHealthy: true, detail: "live (\(currentRole))")
    }

    /// `/readyz`: bound, journal available, at least one worker.
    public func readiness() -> Report {
        let role = currentRole
        guard role == .active else { return Report(isHealthy: false, detail: "not ready: \(role)") }
        let workers = workers.load(ordering: .relaxed)
        guard workers > 0 else { return Report(isHealthy: false, detail: "not ready: no worker registered") }
        return Report(isHealthy: true, detail: "ready: \(workers) worker\(workers == 1 ? "" : "s") registered")
    }
}
