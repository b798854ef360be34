/// When a journal's commits are forced to disk.
public enum JournalSync: Sendable, Hashable {
    /// Every commit is durable when it returns (SQLite: WAL with `synchronous=FULL`, one fsync per commit).
    case everyCommit
    /// Commits reach the operating system at once (a process crash, SIGKILL included, loses nothing) but are forced
    /// to disk at most every interval (SQLite: `synchronous=NORMAL` and a checkpoint with fsync when due). A power
    /// loss or an operating-system crash can lose the last interval of commits.
    case interval(Duration)
}
