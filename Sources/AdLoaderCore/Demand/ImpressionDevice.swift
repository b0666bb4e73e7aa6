/// The device an ad was shown on, as the client's shown Return names it: what a source
/// forwards with its billing notice (an exchange counts and filters impressions by the
/// viewer's IP address and user agent). Both empty when the Return said nothing; never part
/// of a request (a pooled ad is bought before its device is known).
public struct ImpressionDevice: Hashable, Sendable {
    /// An IPv4 or IPv6 literal; empty: not said.
    public var ip: String
    /// The device's User-Agent; empty: not said.
    public var userAgent: String

    public init(ip: String = "", userAgent: String = "") {
        self.ip = ip
        self.userAgent = userAgent
    }

    /// Neither field said.
    public var isEmpty: Bool { ip.isEmpty && userAgent.isEmpty }
}
