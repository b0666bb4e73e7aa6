/// One configured loader as Stats shows it: whether it is enabled, how many pools it has and
/// how many creatives it keeps blocked.
public struct LoaderState: Hashable, Sendable {
    public var name: String
    /// False after ``NativeAdvertisementLoader/setEnabled(_:loader:)`` disabled it (or the
    /// configuration did).
    public var enabled: Bool
    /// The demand source's name.
    public var source: String
    /// Pools (ad units) it keeps now.
    public var pools: Int
    /// Creatives it does not lend now (a client invalidated them; see ``CreativeKey``). May
    /// count blocks that ended since the last block was added.
    public var blockedCreatives: Int

    public init(name: String, enabled: Bool, source: String, pools: Int, blockedCreatives: Int) {
        self.name = name
        self.enabled = enabled
        self.source = source
        self.pools = pools
        self.blockedCreatives = blockedCreatives
    }
}
