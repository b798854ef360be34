import Foundation

/// What version of concierge is running, for reports: the git revision it was built from when its executable lives
/// in a git checkout (`.build/…` of a clone), else `unknown`.
enum ConciergeVersion {
    /// `git 5b92102` (with `-dirty` when the checkout has changes), or `unknown (not built in a git checkout)`.
    static let current: String = {
        guard let executable = Bundle.main.executableURL else { return "unknown" }
        let folder = executable.resolvingSymlinksInPath().deletingLastPathComponent().path
        guard let revision = git(["-C", folder, "rev-parse", "--short", "HEAD"]), !revision.isEmpty else {
            return "unknown (not built in a git checkout)"
        }
        let dirty = git(["-C", folder, "status", "--porcelain", "--untracked-files=no"]).map { !$0.isEmpty } ?? false
        return "git \(revision)" + (dirty ? "-dirty" : "")
    }()

    private static func git(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The time now in UTC, `2026-11-28 06:30:12 UTC`.
    static func utcNow() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date())
    }

    /// `arguments` as one line a shell would run again (arguments with spaces or quotes in single quotes).
    static func shellQuoted(_ arguments: [String]) -> String {
        arguments.map { argument in
            let safe = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=,@%+".contains($0) }
            return safe && !argument.isEmpty
                ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }.joined(separator: " ")
    }
}
