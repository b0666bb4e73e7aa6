internal import CNghttp2

/// A header list that is the same for every call (a unary answer's response headers, the OK
/// trailers), laid out once as nghttp2 name/value entries over storage this object owns and
/// submitted with `NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE`: no header
/// list is built per call and nghttp2 does not copy the strings.
///
/// - Important: nghttp2 reads the storage until the frame is sent, so a block must outlive the
///   session it was submitted to: a connection keeps its blocks and deletes its session first.
final class GRPCHeaderBlock {
    private let storage: UnsafeMutableRawBufferPointer
    private let list: UnsafeMutableBufferPointer<nghttp2_nv>

    /// - Parameter pairs: names (lower case, as HTTP/2 requires) and values, in order.
    init(_ pairs: [(name: String, value: String)]) {
        let size = pairs.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        storage = .allocate(byteCount: max(size, 1), alignment: 1)
        list = .allocate(capacity: max(pairs.count, 1))
        var offset = 0
        let base = storage.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let flags = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
        for (index, pair) in pairs.enumerated() {
            let name = base + offset
            offset += Self.copy(pair.name, to: name)
            let value = base + offset
            offset += Self.copy(pair.value, to: value)
            (list.baseAddress! + index).initialize(
                to: nghttp2_nv(
                    name: name, value: value, namelen: pair.name.utf8.count, valuelen: pair.value.utf8.count,
                    flags: flags))
        }
        count = pairs.count
    }

    deinit {
        storage.deallocate()
        list.deallocate()
    }

    /// The number of header fields.
    let count: Int

    /// The entries, for `nghttp2_submit_response` and `nghttp2_submit_trailer`.
    var entries: UnsafePointer<nghttp2_nv> { UnsafePointer(list.baseAddress!) }

    /// The fields as text, for tests.
    var pairs: [(name: String, value: String)] {
        (0..<count).map { index in
            let entry = list[index]
            return (
                String(decoding: UnsafeBufferPointer(start: entry.name, count: entry.namelen), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(start: entry.value, count: entry.valuelen), as: UTF8.self)
            )
        }
    }

    private static func copy(_ text: String, to destination: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 0
        for byte in text.utf8 {
            destination[count] = byte
            count += 1
        }
        return count
    }
}
