import AdLoaderWire

/// What the generator needs from one `ResponseFrame`, read by walking its protobuf fields
/// in place (no unpack, no copies). The first answers of each connection are also decoded
/// with AdLoaderWire's `ResponseFrame` / `BorrowResponseMessage` and compared (see
/// `LoadConnection.verify`).
struct ScannedResponse {
    var callID: UInt64 = 0
    var end = false
    var status: UInt64 = 0
    /// For a Borrow answer: the lease id, 0 when the answer carried no lease (NO_AD_YET).
    var leaseID: UInt64 = 0
    /// For a Borrow answer: `BorrowOutcome` (1 leased, 2 reused, 3 no ad yet).
    var borrowOutcome: UInt64 = 0
    var messageLength = 0
}

enum ResponseScanner {
    /// Scans an envelope; `isBorrow` says to look inside `message` for the outcome and lease id.
    /// - Returns: nil when the bytes are not well-formed protobuf.
    static func scan(_ bytes: UnsafeRawBufferPointer, isBorrow: Bool) -> ScannedResponse? {
        var r = ScannedResponse()
        var message: UnsafeRawBufferPointer? = nil
        let ok = walk(bytes) { field, wire, value, sub in
            switch (field, wire) {
            case (1, 0): r.callID = value
            case (2, 2): message = sub
            case (3, 0): r.end = value != 0
            case (4, 0): r.status = value
            default: break
            }
        }
        guard ok else { return nil }
        if let message {
            r.messageLength = message.count
            if isBorrow {
                var lease: UnsafeRawBufferPointer? = nil
                guard
                    walk(
                        message,
                        { field, wire, value, sub in
                            if field == 1 && wire == 0 { r.borrowOutcome = value }
                            if field == 2 && wire == 2 { lease = sub }
                        })
                else { return nil }
                if let lease {
                    guard
                        walk(
                            lease,
                            { field, wire, value, _ in
                                if field == 1 && wire == 0 { r.leaseID = value }
                            })
                    else { return nil }
                }
            }
        }
        return r
    }

    /// Calls `visit(field, wireType, varintValue, lengthDelimitedBytes)` for each field.
    @inline(__always)
    private static func walk(
        _ bytes: UnsafeRawBufferPointer, _ visit: (UInt64, UInt64, UInt64, UnsafeRawBufferPointer?) -> Void
    ) -> Bool {
        var i = 0
        let n = bytes.count
        @inline(__always) func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while i < n && shift < 64 {
                let b = bytes[i]
                i += 1
                result |= UInt64(b & 0x7f) << shift
                if b < 0x80 { return result }
                shift += 7
            }
            return nil
        }
        while i < n {
            guard let key = varint() else { return false }
            let field = key >> 3
            switch key & 7 {
            case 0:
                guard let v = varint() else { return false }
                visit(field, 0, v, nil)
            case 1:
                guard n - i >= 8 else { return false }
                i += 8
            case 2:
                guard let length = varint(), length <= UInt64(n - i) else { return false }
                let sub = UnsafeRawBufferPointer(rebasing: bytes[i..<(i + Int(length))])
                i += Int(length)
                visit(field, 2, 0, sub)
            case 5:
                guard n - i >= 4 else { return false }
                i += 4
            default:
                return false
            }
        }
        return true
    }
}
