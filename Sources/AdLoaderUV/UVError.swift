internal import CLibUV

/// A libuv call that failed: the negative error code and the call that returned it.
///
/// Every negative libuv return passes through ``uvCheck(_:_:)`` so errors read the same
/// everywhere: `uv_tcp_bind: EADDRINUSE (address already in use)`.
public struct UVError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libuv's negative error code, e.g. `UV_EADDRINUSE`.
    public var code: Int32
    /// The libuv function (or operation) that failed.
    public var operation: String

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// libuv's symbolic name of the code, e.g. "ECONNRESET".
    public var name: String { String(cString: uv_err_name(code)) }

    /// True for end of stream (`UV_EOF`).
    public var isEndOfFile: Bool { code == UV_EOF.rawValue }

    /// True for a request cancelled by closing its handle (`UV_ECANCELED`).
    public var isCancelled: Bool { code == UV_ECANCELED.rawValue }

    /// `UV_EOF`, `UV_ECANCELED` and `UV_EPIPE`, for streams that are not libuv's (tests).
    public static let endOfFileCode = UV_EOF.rawValue
    public static let cancelledCode = UV_ECANCELED.rawValue
    public static let brokenPipeCode = UV_EPIPE.rawValue
    /// `UV_EPROTO`: a stream's peer broke its protocol (a TLS record that does not decrypt).
    public static let protocolErrorCode = UV_EPROTO.rawValue

    public var description: String { "\(operation): \(name) (\(String(cString: uv_strerror(code))))" }
}

/// Passes a libuv return value through, throwing ``UVError`` when it is negative.
/// - Parameters:
///   - result: what the libuv function returned.
///   - operation: the function's name, for the error.
/// - Throws: ``UVError`` when `result < 0`.
@discardableResult
package func uvCheck(_ result: Int32, _ operation: @autoclosure () -> String) throws(UVError) -> Int32 {
    if result < 0 { throw UVError(code: result, operation: operation()) }
    return result
}
