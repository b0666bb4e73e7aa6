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

    /// Ends the lease of a Return: invalidating its creative when asked.
    func endLease(_ message: ReturnRequestMessage) throws(LoaderError) -> ReturnOutcome {
        guard message.invalidate else { return try loader.returnLease(message.leaseID, shown: message.shown) }
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
