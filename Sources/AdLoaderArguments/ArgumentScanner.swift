/// Reads a command line one argument at a time, the one way every executable of the package
/// parses its arguments.
///
/// An argument starting with `--` is an option, and `--name=value` carries its value inline; an
/// argument starting with `-` and longer than that (`-h`) is an option too; anything else,
/// including a lone `-`, is a positional. What an option means, and whether it takes a value,
/// is the caller's business: after ``next()`` returns an option, ``value()`` takes its value
/// (inline, or else the next argument, whatever it looks like).
///
/// ```swift
/// var scanner = ArgumentScanner(arguments)
/// while let argument = scanner.next() {
///     switch argument {
///     case .option("--port"): port = try scanner.value(in: 1...65_535)
///     case .option("--quiet"): quiet = true
///     case .option(let name): throw ...  // unknown option
///     case .positional(let text): files.append(text)
///     }
/// }
/// ```
public struct ArgumentScanner: Sendable {
    /// One argument of the command line.
    public enum Argument: Hashable, Sendable {
        /// `--name`, `--name=value` (as `--name`) or `-x`.
        case option(String)
        case positional(String)
    }

    /// An option without its value, or with a value that does not parse.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The option at fault, e.g. `--port`.
        public var option: String
        /// What is wrong, e.g. `needs a value`.
        public var message: String

        public init(option: String, message: String) {
            self.option = option
            self.message = message
        }

        /// An option the command does not know (`unknown option`), or a positional it does not
        /// take (`unexpected argument`).
        public static func unknown(_ argument: String) -> Self {
            Self(option: argument, message: argument.hasPrefix("-") ? "unknown option" : "unexpected argument")
        }

        /// `--port: needs a value`.
        public var description: String { "\(option): \(message)" }
    }

    private let arguments: [String]
    private var index = 0
    /// The option ``next()`` returned last, and its inline value.
    private var current: (name: String, inlineValue: String?)?

    public init(_ arguments: [String]) {
        self.arguments = arguments
    }

    /// The next argument, or nil after the last. An inline value ``value()`` did not take is
    /// dropped.
    public mutating func next() -> Argument? {
        current = nil
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            let name = String(argument[..<equals])
            current = (name, String(argument[argument.index(after: equals)...]))
            return .option(name)
        }
        if argument.hasPrefix("-") && argument.count > 1 {
            current = (argument, nil)
            return .option(argument)
        }
        return .positional(argument)
    }

    /// The value of the option ``next()`` just returned: its inline value, or the next argument.
    /// - Throws: ``Failure`` "needs a value" when the command line ends there.
    /// - Important: call it only right after ``next()`` returned an option.
    public mutating func value() throws(Failure) -> String {
        guard let option = current else { preconditionFailure("value() without an option") }
        if let inline = option.inlineValue {
            current = (option.name, nil)
            return inline
        }
        guard index < arguments.count else { throw Failure(option: option.name, message: "needs a value") }
        index += 1
        return arguments[index - 1]
    }

    /// The option's value read as a `Value` (`Int`, `Double`, `UInt64`, ...).
    /// - Throws: ``Failure`` when it is missing or does not parse.
    public mutating func value<Value: LosslessStringConvertible>(as _: Value.Type) throws(Failure) -> Value {
        let text = try value()
        guard let value = Value(text) else { throw Failure(option: currentName, message: "not a number: \"\(text)\"") }
        return value
    }

    /// The option's value read as a number within `range`.
    /// - Throws: ``Failure`` when it is missing, does not parse or is out of range.
    public mutating func value<Value: LosslessStringConvertible & Comparable>(
        in range: ClosedRange<Value>
    ) throws(Failure) -> Value {
        let text = try value()
        guard let value = Value(text), range.contains(value) else {
            throw Failure(option: currentName, message: "must be a number in \(range), got \"\(text)\"")
        }
        return value
    }

    private var currentName: String { current?.name ?? "" }
}
