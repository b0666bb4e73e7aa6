internal import CHiredis

/// One Redis reply as a Swift value, copied out of the `redisReply` hiredis' reader built
/// (``RedisConnection`` frees the C reply right after).
enum RedisReply: Hashable, Sendable {
    /// A bulk string, byte for byte (binary-safe: the pool store's blob is one).
    case bulk([UInt8])
    case status(String)
    case integer(Int)
    case array([RedisReply])
    case null
    /// An error reply (`-ERR ...`, `-MOVED 3999 127.0.0.1:7001`, `-NOSCRIPT ...`).
    case error(String)

    /// Copies `reply` (recursively for arrays). Nil for a NULL pointer.
    init?(_ reply: UnsafeMutablePointer<redisReply>?) {
        guard let reply else { return nil }
        let r = reply.pointee
        func bytes() -> [UInt8] {
            guard let str = r.str else { return [] }
            return Array(UnsafeRawBufferPointer(start: str, count: Int(r.len)))
        }
        func text() -> String { String(decoding: bytes(), as: UTF8.self) }
        switch r.type {
        case REDIS_REPLY_STRING: self = .bulk(bytes())
        case REDIS_REPLY_STATUS: self = .status(text())
        case REDIS_REPLY_ERROR: self = .error(text())
        case REDIS_REPLY_INTEGER: self = .integer(Int(r.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(Int(r.elements))
            for i in 0..<Int(r.elements) { elements.append(RedisReply(r.element?[i]) ?? .null) }
            self = .array(elements)
        default: self = .null
        }
    }

    /// A bulk string's bytes as UTF-8 text (nil for any other reply).
    var text: String? {
        if case .bulk(let bytes) = self { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    /// The error text when this is an error reply.
    var errorMessage: String? {
        if case .error(let message) = self { return message }
        return nil
    }

    /// A redirection in an error reply: `MOVED <slot> <host>:<port>` or `ASK <slot> <host>:<port>`.
    struct Redirect: Hashable, Sendable {
        var isAsk: Bool
        var slot: Int
        var address: RedisAddress
    }

    var redirect: Redirect? {
        guard let message = errorMessage else { return nil }
        let parts = message.split(separator: " ")
        guard parts.count == 3, parts[0] == "MOVED" || parts[0] == "ASK", let slot = Int(parts[1]),
            (0..<RedisSlot.count).contains(slot), let address = RedisAddress(parsing: String(parts[2]))
        else { return nil }
        return Redirect(isAsk: parts[0] == "ASK", slot: slot, address: address)
    }
}

/// A Redis node's address, `host:port`.
public struct RedisAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port` (the last colon splits, so `::1:7000` works); nil when malformed.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65_535).contains(port), colon != text.startIndex
        else { return nil }
        host = String(text[..<colon])
        self.port = port
    }

    public var description: String { "\(host):\(port)" }
}
