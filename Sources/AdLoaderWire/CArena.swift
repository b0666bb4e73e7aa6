internal import CProtobufC

/// A bump allocator that keeps C strings, sub-messages and arrays alive while a protobuf-c
/// struct that points at them is packed; everything is freed at once afterwards.
///
/// Use only through ``CArena/with(_:)``, which frees the memory when the body returns, so
/// no pointer handed out can outlive a pack.
final class CArena {
    private var chunks: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer? = nil
    private var remaining = 0
    private static let chunkSize = 4096

    private init() {}

    /// Runs `body` with a fresh arena and frees all its memory when `body` returns.
    static func with<R>(_ body: (CArena) throws(FrameError) -> R) throws(FrameError) -> R {
        let arena = CArena()
        defer { arena.deallocateAll() }
        return try body(arena)
    }

    /// Runs `body` with a fresh arena and frees all its memory when `body` returns.
    static func with<R>(_ body: (CArena) -> R) -> R {
        let arena = CArena()
        defer { arena.deallocateAll() }
        return body(arena)
    }

    private func deallocateAll() {
        for chunk in chunks { chunk.deallocate() }
        chunks.removeAll()
        cursor = nil
        remaining = 0
    }

    /// Raw, 16-byte aligned memory for `byteCount` bytes.
    private func allocateRaw(_ byteCount: Int) -> UnsafeMutableRawPointer {
        let size = (max(byteCount, 1) + 15) & ~15
        if size > remaining {
            if size > Self.chunkSize / 2 {
                // Large block (e.g. a long string): its own allocation, keep the current chunk.
                let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
                chunks.append(block)
                return block
            }
            let chunk = UnsafeMutableRawPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
            chunks.append(chunk)
            cursor = chunk
            remaining = Self.chunkSize
        }
        let p = cursor!
        cursor = p + size
        remaining -= size
        return p
    }

    /// A NUL-terminated copy of `string` (its UTF-8 up to the first NUL, if it has one).
    func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
        var string = string
        return string.withUTF8 { utf8 in
            let p = allocateRaw(utf8.count + 1)
            if let base = utf8.baseAddress { p.copyMemory(from: base, byteCount: utf8.count) }
            p.storeBytes(of: 0, toByteOffset: utf8.count, as: UInt8.self)
            return p.bindMemory(to: CChar.self, capacity: utf8.count + 1)
        }
    }

    /// A C array of C strings (`char **`), or nil when `strings` is empty.
    func cStringArray(_ strings: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        guard !strings.isEmpty else { return nil }
        let array = allocate(UnsafeMutablePointer<CChar>?.self, count: strings.count)
        for (i, s) in strings.enumerated() { (array + i).initialize(to: cString(s)) }
        return array
    }

    /// Uninitialized memory for `count` values of `type`; the caller initializes it.
    func allocate<T>(_ type: T.Type, count: Int = 1) -> UnsafeMutablePointer<T> {
        precondition(MemoryLayout<T>.alignment <= 16)
        return allocateRaw(MemoryLayout<T>.stride * count).bindMemory(to: T.self, capacity: count)
    }

    /// A binary-data field pointing at a copy of `bytes`.
    func binaryData(_ bytes: [UInt8]) -> ProtobufCBinaryData {
        guard !bytes.isEmpty else { return ProtobufCBinaryData(len: 0, data: nil) }
        let p = allocateRaw(bytes.count)
        bytes.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return ProtobufCBinaryData(len: bytes.count, data: p.assumingMemoryBound(to: UInt8.self))
    }
}
