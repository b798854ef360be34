/// A RESULT whose frames passed check 6 of `Schemas/PROTOCOL.md` section 5.12. The body is not copied: it stays in
/// frame ``bodyIndex`` of the message.
public struct WorkerResult: Sendable, Hashable {
    /// What a RESULT says about its job (F3): `stop` also stands for any word other than `continue` and `error`
    /// (section 5.3).
    public typealias Outcome = JobOutcome

    /// The index of the body frame (F4).
    public static let bodyIndex = 4

    /// F2: the job id's 8 bytes, loaded in host byte order (as the broker stored them when it sent the JOB).
    public let jobID: UInt64
    /// F3.
    public let outcome: Outcome
    /// The size of the body (F4), at least 1.
    public let bodySize: Int

    /// A RESULT with these fields (the decoder makes them; tests and fuzz targets compare them).
    public init(jobID: UInt64, outcome: Outcome, bodySize: Int) {
        self.jobID = jobID
        self.outcome = outcome
        self.bodySize = bodySize
    }
}
