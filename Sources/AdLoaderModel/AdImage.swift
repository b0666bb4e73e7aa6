/// An image asset of a native ad.
public struct AdImage: Hashable, Sendable {
    public var url: String
    public var width: Int
    public var height: Int

    public init(url: String, width: Int = 0, height: Int = 0) {
        self.url = url
        self.width = width
        self.height = height
    }
}
