#if canImport(Glibc)
    import Glibc
#endif

/// Writes transcripts: one JSON Lines file per conversation in one directory, a line per record, each written with
/// one `write(2)` as it comes (no `fsync`: a conversation's few lines cost a system call each and never wait for the
/// disk).
///
/// Not `Sendable`: its owner (the broker's loop) uses it from one thread. Every failure is thrown as a
/// ``TranscriptError``, for the owner to log; nothing traps.
///
/// ```swift
/// let writer = try TranscriptWriter(directory: "/var/lib/concierge/transcripts")
/// let file = try writer.begin(conversation: "c-1", scope: routingID, start: .start(.init(
///     conversation: "c-1", intentType: "OrderPizza", at: TranscriptClock.timestamp(), flags: ["record"], maxAsks: 3)))
/// try writer.append(.turn(.init(turn: 1, requestID: "r1", sent: body, at: TranscriptClock.timestamp())), to: file)
/// try writer.append(.end(.init(ending: "completed", turns: 1, at: TranscriptClock.timestamp())), to: file)
/// writer.finish(file)
/// ```
public final class TranscriptWriter {
    /// An open transcript: where its file is. Give it to ``append(_:to:)`` and ``finish(_:)``.
    public struct File: Sendable, Hashable {
        /// The file's path.
        public let path: String
        /// The conversation id.
        public let conversation: String
        /// The conversation's scope (the client's identity, CURVE key and scope name; or its routing id).
        let scope: [UInt8]
    }

    /// The directory the files are in.
    public let directory: String
    /// The open files' descriptors, by conversation.
    private var descriptors: [File: Int32] = [:]

    /// A writer into `directory`, which is created (with the directories above it) if it is not there.
    /// - Throws: ``TranscriptError`` `io` when it cannot be created.
    public init(directory: String) throws(TranscriptError) {
        self.directory = directory
        try _File.makeDirectories(directory)
    }

    deinit {
        for descriptor in descriptors.values { close(descriptor) }
    }

    /// How many transcripts are open.
    public var openCount: Int { descriptors.count }

    /// Opens the transcript of conversation `id` of `scope` and writes its first record, `start`.
    ///
    /// The file is `<directory>/<escaped id>-<8 hex digits>.jsonl` (``fileName(conversation:scope:)``); when a file
    /// of that name is there already (the same client used the id again after the earlier conversation was gone), the
    /// new one is `...-2.jsonl`, `...-3.jsonl` and so on, so no transcript is ever overwritten.
    /// - Throws: ``TranscriptError`` `already-open` if this conversation's transcript is open, `io` if the file
    ///   cannot be created or written (then nothing stays open).
    @discardableResult
    public func begin(conversation id: String, scope: [UInt8], start: TranscriptRecord) throws(TranscriptError)
        -> File
    {
        if descriptors.keys.contains(where: { $0.conversation == id && $0.scope == scope }) {
            throw TranscriptError(
                code: .alreadyOpen, message: "the transcript of conversation \(id) is open already")
        }
        let name = Self.fileName(conversation: id, scope: scope)
        let stem = String(name.dropLast(".jsonl".count))
        var path = directory + "/" + name
        var descriptor: Int32 = -1
        for copy in 1...1000 {
            if copy > 1 { path = directory + "/" + stem + "-\(copy).jsonl" }
            descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o644)
            if descriptor >= 0 || errno != EEXIST { break }
        }
        guard descriptor >= 0 else { throw _File.failure("create the transcript", path) }
        let file = File(path: path, conversation: id, scope: scope)
        do {
            try _File.write(start.jsonLineBytes() + [UInt8(ascii: "\n")], to: descriptor, path: path)
        } catch {
            close(descriptor)
            throw error
        }
        descriptors[file] = descriptor
        return file
    }

    /// Appends one record to an open transcript.
    /// - Throws: ``TranscriptError`` `not-open` when `file` is not open (finished, or never begun), `io` when the
    ///   write fails (the file stays open: the next record may be written).
    public func append(_ record: TranscriptRecord, to file: File) throws(TranscriptError) {
        guard let descriptor = descriptors[file] else {
            throw TranscriptError(
                code: .notOpen, message: "the transcript of conversation \(file.conversation) is not open",
                path: file.path)
        }
        try _File.write(record.jsonLineBytes() + [UInt8(ascii: "\n")], to: descriptor, path: file.path)
    }

    /// Closes a transcript; nothing more is written to it. Finishing one that is not open does nothing.
    public func finish(_ file: File) {
        if let descriptor = descriptors.removeValue(forKey: file) { close(descriptor) }
    }

    /// The file name of conversation `id` of `scope`: the id with every byte outside `A-Z a-z 0-9 . _ -` written
    /// `%XX` (upper-case hex), a `-`, 8 lower-case hex digits of a hash of the scope and the id (so that two clients'
    /// conversations of the same id get two files, and the name does not show the client), and `.jsonl`.
    public static func fileName(conversation id: String, scope: [UInt8]) -> String {
        var name = ""
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                name += "%" + hex(UInt32(byte), digits: 2).uppercased()
            }
        }
        return name + "-" + hex(scopeHash(conversation: id, scope: scope), digits: 8) + ".jsonl"
    }

    /// FNV-1a (32 bits) of the scope's length (4 bytes, big-endian), the scope and the id: stable across runs and
    /// machines, unlike Swift's seeded `Hasher`.
    static func scopeHash(conversation id: String, scope: [UInt8]) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        func add(_ byte: UInt8) {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        let length = UInt32(truncatingIfNeeded: scope.count)
        for shift in stride(from: 24, through: 0, by: -8) { add(UInt8(truncatingIfNeeded: length >> UInt32(shift))) }
        for byte in scope { add(byte) }
        for byte in id.utf8 { add(byte) }
        return hash
    }

    static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
