/// The answer of a health check (`/livez`, `/readyz`): whether the process is live (or ready), and why not.
public struct HealthStatus: Sendable, Equatable {
    public var isHealthy: Bool
    /// One line for people: what is wrong, or what is fine.
    public var detail: String

    public init(isHealthy: Bool, detail: String) {
        self.isHealthy = isHealthy
        self.detail = detail
    }

    public static func healthy(_ detail: String = "ok") -> HealthStatus {
        HealthStatus(isHealthy: true, detail: detail)
    }
    public static func unhealthy(_ detail: String) -> HealthStatus { HealthStatus(isHealthy: false, detail: detail) }
}
