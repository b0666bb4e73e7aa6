import AdLoaderCore
import AdLoaderService

#if canImport(Glibc)
    import Glibc
#endif

extension ServerConfiguration.Auth {
    /// Whether any token is configured (inline, named or in a file).
    var hasTokens: Bool {
        tokens.contains { !$0.isEmpty } || namedTokens.values.contains { !$0.isEmpty } || !tokenFiles.isEmpty
    }

    /// Every accepted token with its caller name: `tokens` as `token-1`, `token-2`... then the
    /// named ones, then one per token file (its first line, read now), each group by name.
    /// - Parameter readFile: reads a token file (injected for tests).
    /// - Throws: ``ConfigError`` for `auth.tokenFiles.NAME` when its file cannot be read or its
    ///   first line is empty.
    func resolvedTokens(
        readFile: (String) throws(ConfigError) -> String = ServerConfiguration.readFile
    ) throws(ConfigError) -> [CallAuthenticator.Token] {
        var result = tokens.enumerated().map {
            CallAuthenticator.Token(name: "token-\($0.offset + 1)", value: $0.element)
        }
        result += namedTokens.sorted { $0.key < $1.key }.map { CallAuthenticator.Token(name: $0.key, value: $0.value) }
        for (name, path) in tokenFiles.sorted(by: { $0.key < $1.key }) {
            let text: String
            do {
                text = try readFile(path)
            } catch {
                throw ConfigError(field: "auth.tokenFiles.\(name)", message: error.message)
            }
            let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let token = String(line.hasSuffix("\r") ? line.dropLast() : line[...]).trimmingSpaces
            if token.isEmpty {
                throw ConfigError(
                    field: "auth.tokenFiles.\(name)", message: "\(path): the first line (the token) is empty")
            }
            result.append(CallAuthenticator.Token(name: name, value: String(token)))
        }
        return result
    }
}

extension UInt8 {
    var isASCIILetterOrDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}
