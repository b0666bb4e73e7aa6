import AdLoaderCore
import AdLoaderLogging
import AdLoaderWire

/// Run-time control calls: SetLoaderEnabled, Reload, and the invalidating Return.
///
/// They change the service for every client, and go through the same token auth as every
/// call (``CallAuthenticator``, applied by the transports before ``handle(_:callID:timeout:responder:)``):
/// with tokens configured, only a client holding one can call them from another host (and from
/// this host too with `requireOnLoopback`). Each is logged at info level.
extension AdLoaderService {
    /// The longest `invalidate_reason` accepted, in bytes.
    public static let maxInvalidateReasonLength = 1_024

    /// Checks a Return's invalidation fields: a reason of 1...``maxInvalidateReasonLength``
    /// bytes with `invalidate`, none without.
    /// - Throws: ``LoaderError`` `.invalidArgument` naming `invalidate_reason`.
    func checkInvalidation(_ message: ReturnRequestMessage) throws(LoaderError) {
        let length = message.invalidateReason.utf8.count
        if message.invalidate {
            if message.invalidateReason.allSatisfy(\.isWhitespace) {
                throw LoaderError(
                    code: .invalidArgument, field: "invalidate_reason",
                    message: "required with invalidate (why, e.g. \"bad creative\")")
            }
            if length > Self.maxInvalidateReasonLength {
                throw LoaderError(
                    code: .invalidArgument, field: "invalidate_reason",
                    message: "must be at most \(Self.maxInvalidateReasonLength) bytes, got \(length)")
            }
        } else if length > 0 {
            throw LoaderError(
                code: .invalidArgument, field: "invalidate_reason", message: "set without invalidate")
        }
    }

    /// The longest `device_user_agent` accepted, in bytes.
    public static let maxDeviceUserAgentLength = 1_024

    /// Checks a Return's device fields: `device_ip` an IPv4 or IPv6 literal, `device_user_agent`
    /// at most ``maxDeviceUserAgentLength`` bytes without control characters (it becomes an
    /// HTTP header of the billing notice), each empty or set.
    /// - Throws: ``LoaderError`` `.invalidArgument` naming the field.
    func checkDevice(_ message: ReturnRequestMessage) throws(LoaderError) {
        if !message.deviceIP.isEmpty && !Self.isIPLiteral(message.deviceIP) {
            throw LoaderError(
                code: .invalidArgument, field: "device_ip",
                message: "must be an IPv4 or IPv6 address such as 203.0.113.7 or 2001:db8::7")
        }
        let agent = message.deviceUserAgent.utf8
        if agent.count > Self.maxDeviceUserAgentLength {
            throw LoaderError(
                code: .invalidArgument, field: "device_user_agent",
                message: "must be at most \(Self.maxDeviceUserAgentLength) bytes, got \(agent.count)")
        }
        if agent.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw LoaderError(
                code: .invalidArgument, field: "device_user_agent", message: "must not contain control characters")
        }
    }

    /// Whether `text` is a dotted-quad IPv4 address or an IPv6 address (hex groups and colons,
    /// at most one `::`, an IPv4 tail allowed), as an exchange expects in `X-Forwarded-For`.
    static func isIPLiteral(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (2...45).contains(bytes.count) else { return false }
        let colon = UInt8(ascii: ":")
        func isIPv4(_ part: ArraySlice<UInt8>) -> Bool {
            let octets = part.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            return octets.count == 4
                && octets.allSatisfy { octet in
                    (1...3).contains(octet.count) && octet.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
                        && !(octet.count > 1 && octet.first == UInt8(ascii: "0"))
                        && octet.reduce(0) { $0 * 10 + Int($1 - 0x30) } <= 255
                }
        }
        guard bytes.contains(colon) else { return isIPv4(bytes[...]) }
        // "::" at most once; without it exactly 8 groups (6 and an IPv4 tail), with it fewer.
        var doubleColons = 0
        for index in 1..<bytes.count where bytes[index] == colon && bytes[index - 1] == colon {
            doubleColons += 1
        }
        guard doubleColons <= 1, !text.contains(":::") else { return false }
        var groups = bytes.split(separator: colon, omittingEmptySubsequences: true)
        var slots = 8
        if let last = groups.last, last.contains(UInt8(ascii: ".")) {
            guard isIPv4(last), bytes.last != colon else { return false }
            groups.removeLast()
            slots = 6
        }
        let isHex: (UInt8) -> Bool = { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
        guard groups.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(isHex) }) else { return false }
        // A single leading or trailing colon (not part of "::") is malformed.
        if bytes.first == colon && !(bytes.count > 1 && bytes[1] == colon) { return false }
        if bytes.last == colon && !(bytes.count > 1 && bytes[bytes.count - 2] == colon) { return false }
        return doubleColons == 1 ? groups.count < slots : groups.count == slots
    }

    /// Ends the lease of a Return: invalidating its creative when asked.
    func endLease(_ message: ReturnRequestMessage) throws(LoaderError) -> ReturnOutcome {
        guard message.invalidate else {
            return try loader.returnLease(
                message.leaseID, shown: message.shown,
                device: ImpressionDevice(ip: message.deviceIP, userAgent: message.deviceUserAgent))
        }
        let outcome = try loader.invalidateLease(
            message.leaseID, shown: message.shown, reason: message.invalidateReason)
        logger.info(
            "creative invalidated",
            ["lease": .int(Int64(bitPattern: message.leaseID)), "reason": .string(message.invalidateReason)])
        return outcome
    }

    /// SetLoaderEnabled: disables or enables a loader (``NativeAdvertisementLoader/setEnabled(_:loader:)``).
    /// - Throws: ``LoaderError`` `.invalidArgument` (field `loader`) for an empty, too long or
    ///   unknown loader name.
    func setLoaderEnabled(
        _ message: SetLoaderEnabledRequestMessage, callID: UInt64, responder: any CallResponder
    ) throws(LoaderError) {
        try checkIdentifier("loader", message.loader)
        if message.loader.isEmpty {
            throw LoaderError(code: .invalidArgument, field: "loader", message: "must name a loader")
        }
        let before = loader.configuration(named: message.loader)?.enabled
        try loader.setEnabled(message.enabled, loader: message.loader)
        let changed = before != message.enabled
        if changed {
            logger.info(message.enabled ? "loader enabled" : "loader disabled", ["loader": .string(message.loader)])
        }
        responder.answer(callID, .message(SetLoaderEnabledResponseMessage(changed: changed)))
    }

    /// Reload: re-reads and applies the configuration through ``reloader``.
    /// - Throws: ``Status`` FAILED_PRECONDITION naming the setting when the new configuration
    ///   is refused (the running one stays), UNIMPLEMENTED without a ``reloader``.
    func reload(callID: UInt64, responder: any CallResponder) throws(Status) {
        guard let reloader else {
            throw Status(code: .unimplemented, message: "reload: this server has no configuration to reload")
        }
        do throws(ConfigError) {
            let result = try reloader()
            responder.answer(callID, .message(ReloadResponseMessage(result: result)))
        } catch {
            throw Status(
                code: .failedPrecondition,
                message: "configuration refused, the running one is unchanged: \(error.field): \(error.message)")
        }
    }
}
