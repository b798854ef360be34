import IntentCodegen

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `concierge-intentgen --output-directory DIR FILE.intent.json...`: writes `DIR/FILE.intent.swift` for each
/// definition file (see `Docs/CODEGEN.md`), or prints every problem as `file: error: path: message` on standard error
/// and exits with status 1. A file whose contents would not change is left alone, so that nothing recompiles.
/// The IntentDefinitionPlugin build-tool plugin runs it.
@main
struct IntentGen {
    static func main() {
        var arguments = CommandLine.arguments.dropFirst()
        guard arguments.first == "--output-directory", arguments.count >= 2 else {
            fail("usage: concierge-intentgen --output-directory DIR FILE.intent.json...", status: 2)
        }
        arguments.removeFirst()
        let directory = URL(fileURLWithPath: arguments.removeFirst())
        var inputs: [IntentSourceGenerator.Input] = []
        for file in arguments {
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: file)) else {
                fail("\(file): error: cannot read the file", status: 1)
            }
            inputs.append(IntentSourceGenerator.Input(file: file, bytes: [UInt8](data)))
        }
        let sources: [String]
        do { sources = try IntentSourceGenerator.generate(inputs) } catch {
            fail(error.description, status: 1)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (input, source) in zip(inputs, sources) {
                let url = directory.appendingPathComponent(
                    IntentSourceGenerator.outputFileName(forDefinitionFile: input.file))
                let data = Data(source.utf8)
                if (try? Data(contentsOf: url)) != data { try data.write(to: url) }
            }
        } catch {
            fail("concierge-intentgen: error: cannot write to \(directory.path): \(error)", status: 1)
        }
    }

    static func fail(_ message: String, status: Int32) -> Never {
        let bytes = Array((message + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(status)
    }
}
