import AdLoaderClient
import AdLoaderCore

/// One integration case of the catalog (Examples/README.md): a title built from the template
/// `[Kind] [Format] [Scenario]`, and the code that runs it.
///
/// Swift cases carry their code as a closure run by ``ExampleRunner`` against a live daemon;
/// Python and shell cases name their file, which `Examples/run.sh` runs. Either way the case
/// asserts its outcome: it throws ``ExampleFailure`` (or the client's `Status`) when the
/// daemon did not do what the case shows.
public struct Example: Sendable {
    /// Who talks to the daemon, and how.
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        /// A Swift program with `AdLoaderClient` (the framed protocol).
        case swift = "Swift"
        /// A Python program with grpcio and stubs generated from Proto/ (gRPC over HTTP/2).
        case grpc = "gRPC"
        /// A shell script with the `adloader` CLI.
        case cli = "CLI"
        /// An operator's view: the admin listener (/metrics, health) and the run-time control calls.
        case `operator` = "Operator"

        /// How `adloader examples list` names the kind.
        public var description: String {
            switch self {
            case .swift: "framed client (Swift)"
            case .grpc: "gRPC (Python grpcio)"
            case .cli: "CLI (shell)"
            case .operator: "operator (admin HTTP, control calls)"
            }
        }
    }

    /// The ad format the case is about.
    public enum Format: String, Sendable, CaseIterable, CustomStringConvertible {
        case native = "Native"
        case interstitial = "Interstitial"
        case rewarded = "Rewarded"
        case appOpen = "App-open"

        /// The loader format's name in the configuration and the protocol.
        public var description: String {
            switch self {
            case .native: "native"
            case .interstitial: "interstitial"
            case .rewarded: "rewarded"
            case .appOpen: "app-open"
            }
        }
    }

    /// What runs the case.
    public enum Code: Sendable {
        /// Swift code, run in process by `adloader examples run`.
        case swift(@Sendable (ExampleRun) async throws -> Void)
        /// A Python or shell file, relative to Examples/, run by `Examples/run.sh`.
        case file(String)
    }

    public let kind: Kind
    public let format: Format
    /// What the case shows, after kind and format: "Feed borrow per cell".
    public let scenario: String
    public let code: Code
    /// The file that holds the case, relative to Examples/ (`Swift/NativeFeedSlotAffinity.swift`).
    public let file: String

    /// The title, `[Kind] [Format] [Scenario]`: "gRPC Native Feed borrow per cell".
    public var title: String { "\(kind.rawValue) \(format.rawValue) \(scenario)" }

    /// The name `adloader examples run NAME` takes: the title in lower case, words joined by "-".
    public var name: String {
        title.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
    }

    /// A Swift case; `fileID` records its file for the catalog.
    public init(
        _ kind: Kind, _ format: Format, _ scenario: String, fileID: String = #fileID,
        run: @escaping @Sendable (ExampleRun) async throws -> Void
    ) {
        self.kind = kind
        self.format = format
        self.scenario = scenario
        code = .swift(run)
        file = "Swift/" + (fileID.split(separator: "/").last.map(String.init) ?? fileID)
    }

    /// A case in a Python or shell file under Examples/ (its first comment line is the title).
    public init(_ kind: Kind, _ format: Format, _ scenario: String, file: String) {
        self.kind = kind
        self.format = format
        self.scenario = scenario
        code = .file(file)
        self.file = file
    }

    /// Whether `adloader examples run` can run it (Swift code) or `Examples/run.sh` must.
    public var isSwift: Bool {
        if case .swift = code { true } else { false }
    }
}
