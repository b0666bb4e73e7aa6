internal import CNghttp2
import Glibc

/// The memory of one nghttp2 session: freed blocks kept in lists by size class for the
/// session's next streams, instead of glibc's malloc and free.
///
/// nghttp2 allocates ~8 blocks per stream (the stream, its outbound HEADERS, DATA and trailer
/// items, copies of the header lists, header buffers) and frees them when it closes; with many
/// streams in flight glibc's per-thread cache overflows and most frees take its slow path
/// (`_int_free`, ~1.2k instructions of libc per gRPC Borrow, callgrind). Here a block of a
/// class is taken from and given back to its list in a few instructions.
///
/// Each block has a 16-byte header holding its class (so `free` needs no size, and the payload
/// keeps malloc's 16-byte alignment); blocks over the largest class come from malloc as they
/// are. At most ``keptByteLimit`` bytes of free blocks are kept; the rest goes back to malloc.
///
/// - Important: loop-confined, as its session. Create the session with ``memory`` and call
///   ``releaseAll()`` after `nghttp2_session_del` (which gives every block back first); the
///   allocator must outlive its session.
final class HTTP2Allocator {
    /// Payload sizes of the classes: 64 << index.
    static let classCount = 7
    static let smallestClassShift = 6
    static let largest = 64 << (classCount - 1)
    /// The class number of a block that came from malloc whole (over ``largest``).
    static let unpooled = -1
    static let headerSize = 16
    /// Free bytes kept per session (16 MiB for 1,024 connections at most): with 10 streams in
    /// flight per connection, 8 KiB already made 0.05 mallocs per gRPC Borrow (h2load 32 x 10).
    static let keptByteLimit = 16 * 1024

    @exclusivity(unchecked) private var heads: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    @exclusivity(unchecked) private(set) var keptBytes = 0

    init() {
        heads = .allocate(capacity: Self.classCount)
        heads.initialize(repeating: nil, count: Self.classCount)
    }

    deinit {
        releaseAll()
        heads.deallocate()
    }

    /// The allocator nghttp2 calls: valid while this object lives.
    var memory: nghttp2_mem {
        nghttp2_mem(
            mem_user_data: Unmanaged.passUnretained(self).toOpaque(),
            malloc: { size, user in HTTP2Allocator.with(user) { $0.allocate(size) } },
            free: { pointer, user in HTTP2Allocator.with(user) { $0.free(pointer) } },
            calloc: { count, size, user in HTTP2Allocator.with(user) { $0.allocateZeroed(count, size) } },
            realloc: { pointer, size, user in HTTP2Allocator.with(user) { $0.reallocate(pointer, size) } })
    }

    @inline(__always)
    private static func with<T>(_ user: UnsafeMutableRawPointer?, _ body: (HTTP2Allocator) -> T) -> T {
        Unmanaged<HTTP2Allocator>.fromOpaque(user!)._withUnsafeGuaranteedRef(body)
    }

    /// The class whose blocks hold `size` bytes, or ``unpooled``.
    @inline(__always)
    static func sizeClass(_ size: Int) -> Int {
        if size > largest { return unpooled }
        if size <= 64 { return 0 }
        return Int.bitWidth &- (size &- 1).leadingZeroBitCount &- smallestClassShift
    }

    func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        let sizeClass = Self.sizeClass(size)
        if sizeClass >= 0, let block = heads[sizeClass] {
            heads[sizeClass] = block.load(fromByteOffset: Self.headerSize, as: UnsafeMutableRawPointer?.self)
            keptBytes &-= 64 &<< sizeClass
            return block + Self.headerSize
        }
        let payload = sizeClass >= 0 ? 64 &<< sizeClass : size
        guard let block = malloc(Self.headerSize + payload) else { return nil }
        block.storeBytes(of: sizeClass, as: Int.self)
        return block + Self.headerSize
    }

    /// calloc: `count` × `size` bytes, zeroed; nil when the product overflows.
    func allocateZeroed(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer? {
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, let block = allocate(total) else { return nil }
        memset(block, 0, total)
        return block
    }

    func free(_ pointer: UnsafeMutableRawPointer?) {
        guard let pointer else { return }
        let block = pointer - Self.headerSize
        let sizeClass = block.load(as: Int.self)
        if sizeClass >= 0, keptBytes &+ (64 &<< sizeClass) <= Self.keptByteLimit {
            pointer.storeBytes(of: heads[sizeClass], as: UnsafeMutableRawPointer?.self)
            heads[sizeClass] = block
            keptBytes &+= 64 &<< sizeClass
            return
        }
        Glibc.free(block)
    }

    func reallocate(_ pointer: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
        guard let pointer else { return allocate(size) }
        let sizeClass = (pointer - Self.headerSize).load(as: Int.self)
        if sizeClass >= 0, size <= 64 &<< sizeClass { return pointer }
        if sizeClass < 0, Self.sizeClass(size) < 0 {
            guard let block = realloc(pointer - Self.headerSize, Self.headerSize + size) else { return nil }
            return block + Self.headerSize
        }
        guard let moved = allocate(size) else { return nil }
        // An unpooled block's payload size is not kept: it is at least `largest`, and only
        // grows into another unpooled block (above); a pooled one moving up copies it whole.
        moved.copyMemory(from: pointer, byteCount: sizeClass >= 0 ? min(64 &<< sizeClass, size) : size)
        free(pointer)
        return moved
    }

    /// Gives every kept block back to malloc.
    func releaseAll() {
        for sizeClass in 0..<Self.classCount {
            while let block = heads[sizeClass] {
                heads[sizeClass] = block.load(fromByteOffset: Self.headerSize, as: UnsafeMutableRawPointer?.self)
                Glibc.free(block)
            }
        }
        keptBytes = 0
    }
}
