import AdLoaderClient
import AdLoaderExamples
import Foundation

/// `adloader examples list|run`: the integration-case catalog of Examples/ (Examples/README.md).
enum ExamplesCommand: Sendable {
    /// Print the catalog.
    case list
    /// Run the named Swift cases (`all`: every Swift case) against the endpoint.
    case run(names: [String], all: Bool)

    /// Checks the names against the catalog while the command line is parsed.
    static func parse(_ arguments: [String], all: Bool) throws(UsageError) -> ExamplesCommand {
        guard let sub = arguments.first else { throw UsageError("examples needs list or run") }
        let names = Array(arguments.dropFirst())
        switch sub {
        case "list":
            guard names.isEmpty, !all else { throw UsageError("examples list takes no arguments") }
            return .list
        case "run":
            guard names.isEmpty == all else { throw UsageError("examples run needs NAME... or --all, not both") }
            for name in names {
                guard let example = Catalog.examples.first(where: { $0.name == name }) else {
                    throw UsageError("examples: no case named \"\(name)\" (see adloader examples list)")
                }
                guard example.isSwift else {
                    throw UsageError(
                        "examples: \(name) is a \(example.kind) case: run it with make examples (Examples/run.sh)")
                }
            }
            return .run(names: names, all: all)
        default:
            throw UsageError("examples: unknown subcommand \"\(sub)\" (list or run)")
        }
    }

    /// Prints the catalog, as a table or (`json`) as an array of objects.
    static func list(json: Bool) {
        let examples = Catalog.examples
        if json {
            let objects = examples.map { example -> [String: Any] in
                [
                    "title": example.title, "name": example.name, "kind": example.kind.rawValue,
                    "format": example.format.description, "file": "Examples/" + example.file,
                    "runner": example.isSwift ? "adloader examples run" : "Examples/run.sh",
                ]
            }
            let options: JSONSerialization.WritingOptions = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            if let data = try? JSONSerialization.data(withJSONObject: objects, options: options) {
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        let titleWidth = examples.map(\.title.count).max() ?? 0
        let kindWidth = examples.map(\.kind.description.count).max() ?? 0
        func padded(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - text.count))
        }
        print("\(padded("TITLE", titleWidth))  \(padded("KIND", kindWidth))  FORMAT")
        for example in examples {
            print(
                "\(padded(example.title, titleWidth))  \(padded(example.kind.description, kindWidth))  \(example.format)"
            )
        }
        print(
            "\n\(examples.count) cases. Swift ones: adloader examples run NAME (NAME: the title in lower case, words joined by -);"
                + "\nall of them: make examples. Examples/README.md explains each kind and how to add a case.")
    }

    /// Runs Swift cases; exit status 1 when one failed.
    static func run(names: [String], all: Bool, endpoint: Endpoint, token: String?) async -> Int32 {
        let examples =
            all
            ? Catalog.examples.filter(\.isSwift)
            : names.compactMap { name in Catalog.examples.first { $0.name == name } }
        let failed = await ExampleRunner.run(examples, endpoint: endpoint, token: token) { line in
            print(line)
            fflush(nil)
        }
        print(
            failed.isEmpty
                ? "\(examples.count) passed"
                : "\(failed.count) of \(examples.count) failed: \(failed.joined(separator: ", "))")
        return failed.isEmpty ? CommandRunner.exitOK : CommandRunner.exitStatus
    }
}
