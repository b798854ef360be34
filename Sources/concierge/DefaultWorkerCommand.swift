import Foundation

/// The path of this executable.
var currentExecutablePath: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// What a pool runs by default: the slim `concierge-worker` next to this executable when it is there (a small
/// process), else `concierge worker`.
var defaultWorkerCommand: (executable: String, arguments: [String]) {
    let sibling = URL(fileURLWithPath: currentExecutablePath).deletingLastPathComponent()
        .appendingPathComponent("concierge-worker").path
    if FileManager.default.isExecutableFile(atPath: sibling) { return (sibling, []) }
    return (currentExecutablePath, ["worker"])
}
