import CSQLite
import Foundation
import IntentJournal
import Testing

/// Files that are not sound journals each give a clear error with a stable code (never a fresh start), and a
/// journal is never shared or replaced.
@Suite struct JournalFileTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// Opening `path` fails with `code`, naming the file; the file is left as it was.
    func expectOpenFails(_ path: String, _ code: JournalError.Code, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = FileManager.default.contents(atPath: path)
        let error = #expect(throws: JournalError.self, sourceLocation: sourceLocation) {
            try SQLiteJournal(path: path)
        }
        #expect(error?.code == code, sourceLocation: sourceLocation)
        #expect(error?.message.contains(path) == true, sourceLocation: sourceLocation)
        #expect(FileManager.default.contents(atPath: path) == before, sourceLocation: sourceLocation)
        let checked = #expect(throws: JournalError.self, sourceLocation: sourceLocation) {
            try SQLiteJournal.check(path: path)
        }
        #expect(checked?.code == code, sourceLocation: sourceLocation)
    }

    /// A journal holding 200 requests, closed (so everything is in the main file).
    func filledJournal(_ name: String) throws -> String {
        let path = try directory.journal(name)
        let journal = try SQLiteJournal(path: path)
        try journal.commit((1...200).map { .accepted(Sample.request(UInt64($0))) })
        journal.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        return path
    }

    @Test func aMissingJournalSaysHowToCreateOne() throws {
        let path = directory.file("nowhere.sqlite")
        let error = #expect(throws: JournalError.self) { try SQLiteJournal(path: path) }
        #expect(error?.code == .missing)
        #expect(error?.message.contains("concierge journal init \(path)") == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aZeroLengthFileIsNotAJournal() throws {
        let path = directory.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        expectOpenFails(path, .corrupt)
        #expect(FileManager.default.contents(atPath: path)?.count == 0)
    }

    @Test func randomBytesAreNotAJournal() throws {
        let path = directory.file("random.sqlite")
        let bytes = (0..<20_000).map { _ in UInt8.random(in: 0...255) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        expectOpenFails(path, .corrupt)
    }

    @Test func aTruncatedJournalIsCorrupt() throws {
        let path = try filledJournal("truncated.sqlite")
        let size = try #require(FileManager.default.contents(atPath: path)).count
        #expect(size > 8 * 4096)
        for length in [size / 2, 4096 + 100, 60] {
            let copy = directory.file("truncated-\(length).sqlite")
            let data = try #require(FileManager.default.contents(atPath: path))
            #expect(FileManager.default.createFile(atPath: copy, contents: data.prefix(length)))
            expectOpenFails(copy, .corrupt)
        }
    }

    @Test func aTornPageIsCorrupt() throws {
        let path = try filledJournal("torn.sqlite")
        var data = try #require(FileManager.default.contents(atPath: path))
        // Garbage over the second half of the file's pages, as a torn write would leave.
        for index in (data.count / 2)..<(data.count / 2 + 2 * 4096) {
            data[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7)
        }
        #expect(FileManager.default.createFile(atPath: path, contents: data))
        expectOpenFails(path, .corrupt)
    }

    @Test func anotherApplicationsDatabaseIsNotAJournal() throws {
        let path = directory.file("other.sqlite")
        try withDatabase(path, create: true) { try exec($0, "CREATE TABLE t(x); INSERT INTO t VALUES(1)") }
        expectOpenFails(path, .corrupt)
    }

    @Test func aJournalOfANewerVersionIsRefused() throws {
        let path = try directory.journal()
        try withDatabase(path) { try exec($0, "PRAGMA user_version = 3") }
        expectOpenFails(path, .newerVersion)
    }

    @Test func aDirectoryIsUnreadable() throws {
        let path = directory.file("a-directory")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let error = #expect(throws: JournalError.self) { try SQLiteJournal(path: path) }
        #expect(error?.code == .unreadable)
    }

    @Test(.disabled(if: getuid() == 0, "root reads every file"))
    func aJournalWithoutPermissionsIsUnreadable() throws {
        let path = try directory.journal()
        #expect(chmod(path, 0o200) == 0)
        defer { chmod(path, 0o600) }
        let error = #expect(throws: JournalError.self) { try SQLiteJournal(path: path) }
        #expect(error?.code == .unreadable)
    }

    @Test func aSecondJournalOnTheSamePathIsRefusedWhileTheFirstIsOpen() throws {
        let path = try directory.journal()
        let first = try SQLiteJournal(path: path)
        try first.commit([.accepted(Sample.request(1))])
        let error = #expect(throws: JournalError.self) { try SQLiteJournal(path: path) }
        #expect(error?.code == .locked)
        #expect(error?.message.contains("another broker") == true)
        // The refused open disturbed nothing: the first journal still commits.
        try first.commit([.accepted(Sample.request(2))])
        first.close()
        #expect(try SQLiteJournal.recovered(path).requests.map(\.id) == [1, 2])
    }

    @Test func initRefusesAnExistingFile() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        try journal.commit([.accepted(Sample.request(1))])
        journal.close()
        let before = FileManager.default.contents(atPath: path)
        let error = #expect(throws: JournalError.self) { try SQLiteJournal.create(path: path) }
        #expect(error?.code == .exists)
        #expect(FileManager.default.contents(atPath: path) == before)
        // Any file, not only journals.
        let other = directory.file("notes.txt")
        #expect(FileManager.default.createFile(atPath: other, contents: Data("keep me".utf8)))
        #expect(throws: JournalError.self) { try SQLiteJournal.create(path: other) }
        #expect(FileManager.default.contents(atPath: other) == Data("keep me".utf8))
    }

    @Test func aBackupTakenWhileTheJournalIsOpenRecoversTheSameState() throws {
        let path = try directory.journal()
        let journal = try SQLiteJournal(path: path)
        try journal.commit([
            .accepted(Sample.request(1)), .accepted(Sample.request(2)), .handleDispatched(request: 2),
            .attached(request: 1, Sample.key("c", "dup")), .stored([Sample.result(Sample.key("c", "r"), storedAt: 3)]),
            .keyRecord(Sample.keyRecord("k", state: .inFlight(request: 1), endedAt: nil)),
        ])
        let state = try journal.recover()
        let copy = directory.file("backup.sqlite")
        try SQLiteJournal.backup(path: path, to: copy)
        // The copy is a journal of its own: it opens (and locks) while the original is open.
        let restored = try SQLiteJournal(path: copy)
        #expect(try restored.recover() == state)
        restored.close()
        let again = #expect(throws: JournalError.self) { try SQLiteJournal.backup(path: path, to: copy) }
        #expect(again?.code == .exists)
        journal.close()
    }

    // MARK: Raw SQLite, to make files a journal would never write

    func withDatabase(_ path: String, create: Bool = false, _ body: (OpaquePointer) throws -> Void) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        try #require(sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK)
        let handle = try #require(db)
        defer { sqlite3_close(handle) }
        try body(handle)
    }

    func exec(_ db: OpaquePointer, _ sql: String) throws {
        try #require(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK)
    }
}
