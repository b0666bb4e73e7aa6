/// What identifies a creative when a client invalidates one: the source's own creative id
/// when it gave one (``Ad/creativeID``: OpenRTB `bid.crid`, the synthetic source's image
/// asset), else the creative itself (every native asset, or the full-screen creative, compared
/// field by field).
///
/// Keys are per loader: blocking a creative in one loader leaves other loaders alone. With
/// the creative itself as key, two ads block each other only when they show exactly the same
/// thing: an exchange that varies a tracker URL per bid and sends no `crid` can only be
/// blocked ad by ad, so sources should send creative ids.
public enum CreativeKey: Hashable, Sendable {
    /// The source's creative id.
    case sourceID(String)
    /// The creative's content, for a source that gave no id.
    case content(AdCreative)

    /// The key of `ad`'s creative.
    public init(_ ad: Ad) {
        if let id = ad.creativeID, !id.isEmpty {
            self = .sourceID(id)
        } else {
            self = .content(ad.creative)
        }
    }
}
