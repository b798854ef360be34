import ArgumentParser
import Foundation
import IntentJournal

/// `concierge journal`: create, check, back up and benchmark a broker's SQLite journal.
struct JournalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal",
        abstract: "Create, check, back up and benchmark a broker's journal (a SQLite file).",
        discussion: """
            A broker never creates its journal: `concierge journal init PATH` does, once. Exit status: 0 on success, \
            1 with a message `concierge journal: <code>: <what to do>` on standard error. Codes: journal-missing, \
            journal-unreadable, journal-newer-version, journal-corrupt, journal-io, journal-locked, journal-exists, \
            journal-invalid-operation.
            """,
        subcommands: [Init.self, Check.self, Backup.self, Bench.self]
    )

    /// Prints a journal error and exits with status 1.
    static func fail(_ error: JournalError) -> ExitCode {
        FileHandle.standardError.write(Data("concierge journal: \(error)\n".utf8))
        return ExitCode(1)
    }

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an empty journal (schema version 2) at PATH, or in the PostgreSQL database at URL.",
            discussion: """
                PATH is a SQLite file; an argument starting with postgres:// or postgresql:// \
                (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE) creates the journal's tables in that database, \
                in one transaction. Refuses an existing file or an existing journal in the database (exit 1, \
                journal-exists): a journal is never replaced. The file is created with mode 0600. Exit status: 0 \
                when created, 1 otherwise (journal-unavailable when PostgreSQL cannot be reached).
                """
        )

        @Argument(help: "The journal file to create, or a postgres:// URL.")
        var path: String

        func run() throws {
            do {
                try JournalLocation.create(path)
            } catch {
                throw JournalCommand.fail(error)
            }
            print("concierge journal: created \(JournalLocation.redacted(path)) (schema version 2)")
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a journal and print what it holds.",
            discussion: """
                Opens the journal without locking it (safe while a broker runs), checks that it is a Concierge \
                journal of a version this build reads, runs SQLite's quick_check, and prints the open requests, \
                stored results, idempotency records and conversations. Exit status: 0 when the journal is sound, 1 otherwise \
                (journal-missing, journal-unreadable, journal-corrupt, journal-newer-version, journal-io).
                """
        )

        @Argument(help: "The journal file.")
        var path: String

        func run() throws {
            let summary: JournalSummary
            do {
                summary = try SQLiteJournal.check(path: path)
            } catch {
                throw JournalCommand.fail(error)
            }
            print(
                """
                \(path): ok (schema version \(summary.schemaVersion), \(summary.fileBytes) bytes)
                requests open: \(summary.openRequests) (handle dispatched: \(summary.handleDispatched), \
                duplicates attached: \(summary.listeners))
                results: \(summary.results)
                key records: \(summary.keyRecords)
                conversations: \(summary.conversations)
                next request id: \(summary.nextRequestID)
                """)
        }
    }

    struct Backup: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a journal to a new file, consistently, even while a broker writes it.",
            discussion: """
                Uses SQLite's online backup API: the copy is one snapshot of the journal. DEST must not exist \
                (exit 1, journal-exists). The copy is checked, and opens as a journal of its own. Never copy a \
                journal with cp while a broker runs. Exit status: 0 when copied, 1 otherwise.
                """
        )

        @Argument(help: "The journal file.")
        var path: String

        @Argument(help: "The new file to write.")
        var dest: String

        func run() throws {
            do {
                try SQLiteJournal.backup(path: path, to: dest)
            } catch {
                throw JournalCommand.fail(error)
            }
            print("concierge journal: copied \(path) to \(dest)")
        }
    }
}
