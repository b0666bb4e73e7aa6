public import AdLoaderCore

/// The pool store's record encoding of an ``Ad``: pure bytes, no I/O. Varints, zigzag for
/// signed values, strings as a length and UTF-8; a record starts with its record version so a
/// later build can tell an old record, and a record that does not decode whole is refused
/// (``StoreRecordError``), never read in part.
///
/// The source's context (``Ad/sourceContext``: an OpenRTB bid's price and notice URLs) is
/// encoded by the context itself (``AdSourceContext/snapshotState``) and carried as bytes; its
/// source reads it back (``DemandSource/restoreContext(from:for:)``).
public enum StoreRecordCodec {
    /// Version of the ad record.
    /// 2: advertiser domains and categories after the creative id (the feed plan's separation).
    static let adRecordVersion: UInt8 = 2

    /// One ad as bytes, with its source's encoding of its context (``AdSourceContext/snapshotState``; nil: none).
    public static func encode(_ ad: Ad, context: [UInt8]?) -> [UInt8] {
        var writer = StoreRecordWriter()
        encode(ad, context: context, into: &writer)
        return writer.bytes
    }

    /// ``encode(_:context:)`` appended to `writer` (the journal's reusable buffer: no array per ad).
    public static func encode(_ ad: Ad, context: [UInt8]?, into writer: inout StoreRecordWriter) {
        writer.byte(adRecordVersion)
        writer.string(ad.id)
        writer.string(ad.adUnitID)
        writer.string(ad.loader)
        writer.byte(formatCode(ad.format))
        writer.signed(ad.loadedAt.unixMilliseconds)
        writer.signed(ad.expiresAt.unixMilliseconds)
        writer.unsigned(UInt64(max(ad.showCount, 0)))
        writer.optionalString(ad.creativeID)
        writer.strings(ad.advertiserDomains)
        writer.strings(ad.categories)
        write(ad.creative, into: &writer)
        writer.bool(context != nil)
        if let context { writer.blob(context) }
    }

    /// Decodes ``encode(_:context:)``'s bytes: the ad (without its source context) and the
    /// context bytes for its source to decode.
    /// - Throws: ``StoreRecordError`` for a record of another version, cut short, or with
    ///   bytes left over.
    public static func decodeAd(_ bytes: [UInt8]) throws(StoreRecordError) -> (ad: Ad, context: [UInt8]?) {
        var reader = StoreRecordReader(bytes)
        let version = try reader.byte()
        guard version == adRecordVersion else { throw StoreRecordError("ad record version \(version)") }
        let id = try reader.string()
        let adUnitID = try reader.string()
        let loader = try reader.string()
        let format = try format(of: reader.byte())
        let loadedAt = AdInstant(unixMilliseconds: try reader.signed())
        let expiresAt = AdInstant(unixMilliseconds: try reader.signed())
        let showCount = try reader.int()
        let creativeID = try reader.optionalString()
        let advertiserDomains = try reader.strings()
        let categories = try reader.strings()
        let creative = try readCreative(&reader)
        let context = try reader.bool() ? try reader.blob() : nil
        guard reader.isAtEnd else { throw StoreRecordError("\(reader.remaining) bytes after the record") }
        let ad = Ad(
            id: id, adUnitID: adUnitID, loader: loader, creative: creative, format: format, loadedAt: loadedAt,
            expiresAt: expiresAt, showCount: showCount, creativeID: creativeID, advertiserDomains: advertiserDomains,
            categories: categories)
        return (ad, context)
    }

    /// Version of the pool record.
    /// 2: the consent class after the ad unit (one pool per ad unit and class).
    static let poolRecordVersion: UInt8 = 2

    /// A pool's own state (``PoolSnapshot`` without its ads and leases: loader, ad unit,
    /// format, when taken, creative blocks, demand estimate, Prefetch count) as bytes.
    public static func encodePool(_ snapshot: PoolSnapshot) -> [UInt8] {
        var writer = StoreRecordWriter()
        writer.byte(poolRecordVersion)
        writer.string(snapshot.loader)
        writer.string(snapshot.adUnitID)
        writer.string(snapshot.consentClass)
        writer.byte(formatCode(snapshot.format))
        writer.signed(snapshot.takenAt.unixMilliseconds)
        writer.unsigned(UInt64(snapshot.blockedCreatives.count))
        for (key, until) in snapshot.blockedCreatives.sorted(by: { $0.value < $1.value }) {
            switch key {
            case .sourceID(let id):
                writer.byte(0)
                writer.string(id)
            case .content(let creative):
                writer.byte(1)
                write(creative, into: &writer)
            }
            writer.signed(until.unixMilliseconds)
        }
        let demand = snapshot.demand
        writer.unsigned(demand.averageRate.bitPattern)
        writer.unsigned(demand.slowRate.bitPattern)
        writer.signed(demand.windowStart.unixMilliseconds)
        writer.signed(Int64(demand.windowCount))
        writer.unsigned(demand.latencyMilliseconds.bitPattern)
        writer.bool(demand.adsPerRequest != nil)
        if let perRequest = demand.adsPerRequest { writer.unsigned(perRequest.bitPattern) }
        writer.signed(Int64(snapshot.prefetchWanted))
        return writer.bytes
    }

    /// Decodes ``encodePool(_:)``'s bytes: the snapshot without ads or leases.
    /// - Throws: ``StoreRecordError`` for another version, a cut, or bytes left over.
    public static func decodePool(_ bytes: [UInt8]) throws(StoreRecordError) -> PoolSnapshot {
        var reader = StoreRecordReader(bytes)
        let version = try reader.byte()
        guard version == poolRecordVersion else { throw StoreRecordError("pool record version \(version)") }
        let loader = try reader.string()
        let adUnitID = try reader.string()
        let consentClass = try reader.string()
        let format = try format(of: reader.byte())
        let takenAt = AdInstant(unixMilliseconds: try reader.signed())
        let blockCount = try reader.int()
        guard blockCount <= reader.remaining else { throw StoreRecordError("record cut short") }
        var blocks: [CreativeKey: AdInstant] = [:]
        for _ in 0..<blockCount {
            let key: CreativeKey =
                switch try reader.byte() {
                case 0: .sourceID(try reader.string())
                case 1: .content(try readCreative(&reader))
                case let other: throw StoreRecordError("creative key kind \(other)")
                }
            blocks[key] = AdInstant(unixMilliseconds: try reader.signed())
        }
        let averageRate = Double(bitPattern: try reader.unsigned())
        let slowRate = Double(bitPattern: try reader.unsigned())
        let windowStart = AdInstant(unixMilliseconds: try reader.signed())
        let windowCount = Int(clamping: try reader.signed())
        let latency = Double(bitPattern: try reader.unsigned())
        let perRequest = try reader.bool() ? Double(bitPattern: try reader.unsigned()) : nil
        let prefetchWanted = Int(clamping: try reader.signed())
        guard reader.isAtEnd else { throw StoreRecordError("\(reader.remaining) bytes after the record") }
        var snapshot = PoolSnapshot(
            loader: loader, adUnitID: adUnitID, format: format, takenAt: takenAt, blockedCreatives: blocks,
            demand: .init(
                averageRate: averageRate, slowRate: slowRate, windowStart: windowStart, windowCount: windowCount,
                latencyMilliseconds: latency, adsPerRequest: perRequest),
            prefetchWanted: prefetchWanted)
        snapshot.consentClass = consentClass
        return snapshot
    }

    /// Appends a creative (native assets or a full-screen creative).
    static func write(_ creative: AdCreative, into writer: inout StoreRecordWriter) {
        switch creative {
        case .native(let content):
            writer.byte(0)
            writer.string(content.headline)
            writer.string(content.body)
            writer.string(content.callToAction)
            writer.string(content.advertiser)
            writer.image(content.icon)
            writer.image(content.image)
            writer.bool(content.starRating != nil)
            if let rating = content.starRating { writer.unsigned(rating.bitPattern) }
            writer.optionalString(content.price)
            writer.optionalString(content.store)
            writer.string(content.clickURL)
            writer.strings(content.impressionTrackers)
            writer.strings(content.clickTrackers)
            writer.optionalString(content.adChoicesURL)
        case .fullScreen(let screen):
            writer.byte(1)
            switch screen.media {
            case .markup(let markup):
                writer.byte(0)
                writer.string(markup)
            case .videoURL(let url):
                writer.byte(1)
                writer.string(url)
            case .vastXML(let document):
                writer.byte(2)
                writer.string(document)
            }
            let orientation: UInt8 =
                switch screen.orientation {
                case .any: 0
                case .portrait: 1
                case .landscape: 2
                }
            writer.byte(orientation)
            writer.signed(Int64(screen.width))
            writer.signed(Int64(screen.height))
            writer.bool(screen.reward != nil)
            if let reward = screen.reward {
                writer.string(reward.type)
                writer.signed(Int64(reward.amount))
            }
        }
    }

    static func readCreative(_ reader: inout StoreRecordReader) throws(StoreRecordError) -> AdCreative {
        switch try reader.byte() {
        case 0:
            var content = NativeAdContent(headline: try reader.string())
            content.body = try reader.string()
            content.callToAction = try reader.string()
            content.advertiser = try reader.string()
            content.icon = try reader.image()
            content.image = try reader.image()
            content.starRating = try reader.bool() ? Double(bitPattern: try reader.unsigned()) : nil
            content.price = try reader.optionalString()
            content.store = try reader.optionalString()
            content.clickURL = try reader.string()
            content.impressionTrackers = try reader.strings()
            content.clickTrackers = try reader.strings()
            content.adChoicesURL = try reader.optionalString()
            return .native(content)
        case 1:
            let media: FullScreenCreative.Media =
                switch try reader.byte() {
                case 0: .markup(try reader.string())
                case 1: .videoURL(try reader.string())
                case 2: .vastXML(try reader.string())
                case let other: throw StoreRecordError("media kind \(other)")
                }
            let orientation: FullScreenCreative.Orientation =
                switch try reader.byte() {
                case 0: .any
                case 1: .portrait
                case 2: .landscape
                case let other: throw StoreRecordError("orientation \(other)")
                }
            let width = Int(clamping: try reader.signed())
            let height = Int(clamping: try reader.signed())
            let reward =
                try reader.bool()
                ? FullScreenCreative.Reward(type: try reader.string(), amount: Int(clamping: try reader.signed())) : nil
            return .fullScreen(
                FullScreenCreative(media: media, orientation: orientation, width: width, height: height, reward: reward)
            )
        case let other: throw StoreRecordError("creative kind \(other)")
        }
    }

    private static func formatCode(_ format: AdFormat) -> UInt8 {
        switch format {
        case .native: 0
        case .interstitial: 1
        case .rewarded: 2
        case .appOpen: 3
        }
    }

    private static func format(of code: UInt8) throws(StoreRecordError) -> AdFormat {
        switch code {
        case 0: .native
        case 1: .interstitial
        case 2: .rewarded
        case 3: .appOpen
        default: throw StoreRecordError("format \(code)")
        }
    }
}

/// A pool-store record that does not decode: the store refuses the whole restore.
public struct StoreRecordError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Appends a record's fields.
public struct StoreRecordWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// Forgets the bytes written, keeping the buffer for the next ones.
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// Bytes written so far.
    public var count: Int { bytes.count }

    /// Appends `count` zero bytes, to be overwritten by ``setUInt32(_:at:)`` (a frame's header).
    public mutating func reserve(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }

    /// Overwrites 4 bytes at `offset` with `value`, little-endian.
    public mutating func setUInt32(_ value: UInt32, at offset: Int) {
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in 0..<4 { buffer[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(8 * index)) }
        }
    }

    /// Appends `other`'s bytes as a blob (its length, then the bytes).
    public mutating func blob(_ other: StoreRecordWriter) {
        unsigned(UInt64(other.bytes.count))
        bytes.append(contentsOf: other.bytes)
    }
    public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    public mutating func unsigned(_ value: UInt64) {
        guard value >= 0x80 else {
            bytes.append(UInt8(value))
            return
        }
        // Built in a scratch of 16 bytes and appended at once: a lease id (replica bits on top)
        // is 9-10 bytes, one append each was the journal's largest per-call cost.
        var scratch: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &scratch) { raw in
            let typed = raw.bindMemory(to: UInt8.self)
            var rest = value
            var count = 0
            while rest >= 0x80 {
                typed[count] = UInt8(truncatingIfNeeded: rest) | 0x80
                rest >>= 7
                count += 1
            }
            typed[count] = UInt8(rest)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: typed[0...count]))
        }
    }

    public mutating func signed(_ value: Int64) {
        unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            unsigned(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    public mutating func optionalString(_ value: String?) {
        bool(value != nil)
        if let value { string(value) }
    }

    public mutating func strings(_ values: [String]) {
        unsigned(UInt64(values.count))
        for value in values { string(value) }
    }

    public mutating func blob(_ value: [UInt8]) {
        unsigned(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func image(_ image: AdImage?) {
        bool(image != nil)
        if let image {
            string(image.url)
            signed(Int64(image.width))
            signed(Int64(image.height))
        }
    }
}

/// Reads a record's fields, refusing anything cut short or out of range.
public struct StoreRecordReader {
    private let bytes: ArraySlice<UInt8>
    private var offset: Int

    public init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    /// Reads a part of a buffer in place (a journal's frame inside the bytes read).
    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        offset = bytes.startIndex
    }

    public var isAtEnd: Bool { offset == bytes.endIndex }
    public var remaining: Int { bytes.endIndex - offset }

    public mutating func byte() throws(StoreRecordError) -> UInt8 {
        guard offset < bytes.endIndex else { throw StoreRecordError("record cut short") }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func bool() throws(StoreRecordError) -> Bool {
        switch try byte() {
        case 0: false
        case 1: true
        case let other: throw StoreRecordError("flag \(other)")
        }
    }

    public mutating func unsigned() throws(StoreRecordError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64, shift < 63 || next <= 1 else { throw StoreRecordError("varint too long") }
            value |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { return value }
            shift += 7
        }
    }

    public mutating func signed() throws(StoreRecordError) -> Int64 {
        let raw = try unsigned()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    public mutating func int() throws(StoreRecordError) -> Int {
        let raw = try unsigned()
        guard raw <= UInt64(Int32.max) else { throw StoreRecordError("count \(raw) out of range") }
        return Int(raw)
    }

    public mutating func string() throws(StoreRecordError) -> String {
        let count = try length()
        defer { offset += count }
        // ASCII (ids, classes, slots: most of a journal's replay) is decoded from the buffer
        // as it is; anything else validated (the generic validation of a slice is slow).
        let text = bytes.withUnsafeBufferPointer { all in
            let raw = UnsafeBufferPointer(rebasing: all[(offset - bytes.startIndex)...].prefix(count))
            return raw.allSatisfy({ $0 < 0x80 })
                ? String(decoding: raw, as: UTF8.self) : String(validating: raw, as: UTF8.self)
        }
        guard let text else { throw StoreRecordError("string not UTF-8") }
        return text
    }

    public mutating func optionalString() throws(StoreRecordError) -> String? {
        try bool() ? try string() : nil
    }

    public mutating func strings() throws(StoreRecordError) -> [String] {
        let count = try int()
        guard count <= remaining else { throw StoreRecordError("record cut short") }
        var values: [String] = []
        for _ in 0..<count { values.append(try string()) }
        return values
    }

    public mutating func blob() throws(StoreRecordError) -> [UInt8] {
        let count = try length()
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func image() throws(StoreRecordError) -> AdImage? {
        guard try bool() else { return nil }
        return AdImage(url: try string(), width: Int(clamping: try signed()), height: Int(clamping: try signed()))
    }

    private mutating func length() throws(StoreRecordError) -> Int {
        let count = try unsigned()
        guard count <= UInt64(remaining) else { throw StoreRecordError("record cut short") }
        return Int(count)
    }
}
