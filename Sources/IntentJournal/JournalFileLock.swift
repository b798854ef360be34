import CSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock(2)` on `<journal>-lock`, held while a journal is open, so two brokers never share one
/// journal.
///
/// A lock file of its own rather than the database: SQLite's POSIX locks on the database belong to the process and
/// are all dropped when any descriptor of the file in the process closes, so the journal never opens the database
/// outside SQLite. Readers that do not take this lock (`concierge journal check`, `backup`) can still read the
/// journal while a broker writes it: SQLite's WAL keeps their view consistent. The lock file is never removed
/// (removing it would race with a broker taking it).
final class JournalFileLock {
    private var descriptor: Int32

    /// Takes the lock without waiting; throws ``JournalError/Code/locked`` if another holder has it.
    init(journalPath: String) throws(JournalError) {
        let lockPath = journalPath + "-lock"
        let descriptor = csqlite_open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let errno = csqlite_errno()
            throw JournalError(
                code: errno == EACCES || errno == EROFS || errno == EPERM ? .unreadable : .io,
                message: "\(journalPath): cannot open the lock file \(lockPath): \(String(cString: strerror(errno))). "
                    + "The journal's directory must be writable by this user.")
        }
        var rc: Int32
        repeat { rc = flock(descriptor, LOCK_EX | LOCK_NB) } while rc != 0 && csqlite_errno() == EINTR
        guard rc == 0 else {
            let errno = csqlite_errno()
            close(descriptor)
            if errno == EWOULDBLOCK {
                throw JournalError(
                    code: .locked,
                    message: "\(journalPath) is in use: another broker (or another journal in this process) has it "
                        + "open (it holds \(lockPath)). Stop that broker, or give this one a journal of its own.")
            }
            throw JournalError(
                code: .io, message: "\(journalPath): cannot lock \(lockPath): \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
    }

    deinit { release() }

    /// Releases the lock (idempotent). Unlocked explicitly before the descriptor closes: a process another thread is
    /// starting at that moment holds a copy of the descriptor until it executes its program, and closing ours alone
    /// would leave the lock held until then.
    func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }
}
