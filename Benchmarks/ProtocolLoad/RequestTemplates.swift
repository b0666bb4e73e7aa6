import AdLoaderWire

/// Request frames prepared once with AdLoaderWire's encoders, then stamped per call with
/// only the varints that change (call id, lease id) — no protobuf work on the send path.
///
/// A `RequestFrame` without `call_id` encodes as `method` + `message` fields; prefixing it
/// with `08 <varint call id>` gives exactly what the encoder writes for that id, since
/// protobuf-c writes fields in number order. ``selfCheck()`` proves it against the encoder.
struct RequestTemplates {
    /// The envelope of a Borrow of `adUnitID` with `call_id` left out (fields 2 and 5).
    let borrowTail: [UInt8]
    /// The `method` field of a Return envelope (field 2, tag included).
    let returnMethodField: [UInt8]
    let adUnitID: String
    /// Returns say `shown: true` (the ad is consumed at the loader's show count).
    let shown: Bool

    init(adUnitID: String, shown: Bool = false) {
        self.adUnitID = adUnitID
        self.shown = shown
        let borrow = BorrowRequestMessage(adUnitID: adUnitID, waitMilliseconds: 0)
        borrowTail = RequestFrame(callID: 0, method: MethodName.borrow, request: borrow).encoded()
        returnMethodField = RequestFrame(callID: 0, method: MethodName.returnLease).encoded()
    }

    /// Appends one whole Borrow frame (prefix + envelope) for `callID`.
    @inline(__always)
    func appendBorrow(callID: UInt64, to out: inout ByteBuffer) {
        let length = 1 + varintSize(callID) + borrowTail.count
        out.appendPrefix(length)
        out.append(0x08)
        out.appendVarint(callID)
        out.append(borrowTail)
    }

    /// Appends one whole Return frame (`shown` as configured) of `leaseID` for `callID`.
    @inline(__always)
    func appendReturn(callID: UInt64, leaseID: UInt64, to out: inout ByteBuffer) {
        let message = 1 + varintSize(leaseID) + (shown ? 2 : 0)  // ReturnRequest { 08 lease_id [10 01] }
        let length = 1 + varintSize(callID) + returnMethodField.count + 1 + varintSize(UInt64(message)) + message
        out.appendPrefix(length)
        out.append(0x08)
        out.appendVarint(callID)
        out.append(returnMethodField)
        out.append(0x2a)
        out.appendVarint(UInt64(message))
        out.append(0x08)
        out.appendVarint(leaseID)
        if shown {
            out.append(0x10)
            out.append(0x01)
        }
    }

    /// Compares the stamped frames with AdLoaderWire's own encoding for a spread of ids.
    /// - Returns: a description of the first difference, or nil when all match.
    func selfCheck() -> String? {
        let ids: [UInt64] = [1, 2, 127, 128, 300, 16_383, 16_384, 1 << 21, 1 << 35, UInt64.max]
        for id in ids {
            for lease in [UInt64(1), 127, 128, 99_999, 1 << 40] {
                var expected: [UInt8] = []
                RequestFrame(
                    callID: id, method: MethodName.borrow,
                    request: BorrowRequestMessage(adUnitID: adUnitID, waitMilliseconds: 0)
                ).appendFrame(to: &expected)
                var stamped = ByteBuffer(capacity: 256)
                appendBorrow(callID: id, to: &stamped)
                if stamped.bytes != expected { return "Borrow call \(id): \(stamped.bytes) != \(expected)" }

                expected = []
                RequestFrame(
                    callID: id, method: MethodName.returnLease,
                    request: ReturnRequestMessage(leaseID: lease, shown: shown)
                ).appendFrame(to: &expected)
                stamped = ByteBuffer(capacity: 256)
                appendReturn(callID: id, leaseID: lease, to: &stamped)
                if stamped.bytes != expected {
                    return "Return call \(id) lease \(lease): \(stamped.bytes) != \(expected)"
                }
            }
        }
        return nil
    }
}

@inline(__always)
func varintSize(_ value: UInt64) -> Int {
    value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
}

/// A growable byte buffer with a read offset, on raw memory: append and consume are
/// pointer arithmetic, with no Array bookkeeping per byte.
struct ByteBuffer {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    private(set) var start = 0
    private(set) var end = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    /// Frees the memory; the buffer must not be used afterwards.
    func deallocate() { base.deallocate() }

    var count: Int { end - start }
    var isEmpty: Bool { end == start }
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base + start, count: count)) }
    var readable: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base + start, count: count) }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if end + extra <= capacity { return }
        if start > 0 {
            (base).update(from: base + start, count: count)
            end -= start
            start = 0
            if end + extra <= capacity { return }
        }
        let newCapacity = max(capacity * 2, end + extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: end)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[end] = byte
        end += 1
    }

    @inline(__always)
    mutating func append(_ bytes: [UInt8]) {
        reserve(bytes.count)
        bytes.withUnsafeBufferPointer { (base + end).update(from: $0.baseAddress!, count: $0.count) }
        end += bytes.count
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + end).copyMemory(from: source, byteCount: bytes.count)
        end += bytes.count
    }

    @inline(__always)
    mutating func appendVarint(_ value: UInt64) {
        reserve(10)
        var v = value
        while v >= 0x80 {
            base[end] = UInt8(truncatingIfNeeded: v) | 0x80
            end += 1
            v >>= 7
        }
        base[end] = UInt8(v)
        end += 1
    }

    /// The 5-byte gRPC prefix: flags 0, big-endian length.
    @inline(__always)
    mutating func appendPrefix(_ length: Int) {
        reserve(5)
        let n = UInt32(length)
        base[end] = 0
        base[end + 1] = UInt8(truncatingIfNeeded: n >> 24)
        base[end + 2] = UInt8(truncatingIfNeeded: n >> 16)
        base[end + 3] = UInt8(truncatingIfNeeded: n >> 8)
        base[end + 4] = UInt8(truncatingIfNeeded: n)
        end += 5
    }

    /// Drops `n` bytes from the front (they were written to the socket).
    @inline(__always)
    mutating func consume(_ n: Int) {
        start += n
        if start == end {
            start = 0
            end = 0
        }
    }
}
