import Testing

@testable import AdLoaderGRPC

/// nghttp2's per-session allocator: blocks of every class and over them, reuse, calloc's zeroes,
/// realloc keeping the bytes.
@Suite struct HTTP2AllocatorTests {
    @Test(arguments: [(1, 0), (64, 0), (65, 1), (128, 1), (129, 2), (4096, 6), (4097, HTTP2Allocator.unpooled)])
    func sizeClasses(size: Int, sizeClass: Int) {
        #expect(HTTP2Allocator.sizeClass(size) == sizeClass)
    }

    @Test func aFreedBlockIsReusedForTheSameClass() throws {
        let allocator = HTTP2Allocator()
        let first = try #require(allocator.allocate(100))
        allocator.free(first)
        let second = try #require(allocator.allocate(120))
        #expect(first == second)
        allocator.free(second)
        allocator.free(nil)
    }

    @Test(arguments: [1, 63, 64, 200, 4096, 5000, 70_000])
    func blocksHoldTheirBytesAndAreAligned(size: Int) throws {
        let allocator = HTTP2Allocator()
        let block = try #require(allocator.allocate(size))
        #expect(Int(bitPattern: block) % 16 == 0)
        block.initializeMemory(as: UInt8.self, repeating: 0xAB, count: size)
        #expect(block.load(fromByteOffset: size - 1, as: UInt8.self) == 0xAB)
        allocator.free(block)
    }

    @Test func reallocKeepsTheBytesAcrossClassesAndIntoMalloc() throws {
        let allocator = HTTP2Allocator()
        var block = try #require(allocator.allocate(10))
        for i in 0..<10 { block.storeBytes(of: UInt8(i), toByteOffset: i, as: UInt8.self) }
        for size in [60, 300, 4096, 9000, 20_000, 100] {
            block = try #require(allocator.reallocate(block, size))
            for i in 0..<10 { #expect(block.load(fromByteOffset: i, as: UInt8.self) == UInt8(i)) }
        }
        allocator.free(block)
        let fresh = try #require(allocator.reallocate(nil, 32))
        allocator.free(fresh)
    }

    @Test func callocZeroesAReusedBlock() throws {
        let allocator = HTTP2Allocator()
        let dirty = try #require(allocator.allocate(256))
        dirty.initializeMemory(as: UInt8.self, repeating: 0xFF, count: 256)
        allocator.free(dirty)
        let zeroed = try #require(allocator.allocateZeroed(4, 64))
        #expect(zeroed == dirty)
        #expect((0..<256).allSatisfy { zeroed.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        allocator.free(zeroed)
        #expect(allocator.allocateZeroed(Int.max, 2) == nil)
    }

    @Test func freeBlocksBeyondTheLimitGoBackToMalloc() throws {
        let allocator = HTTP2Allocator()
        let count = HTTP2Allocator.keptByteLimit / 4096 + 4
        let blocks = try (0..<count).map { _ in try #require(allocator.allocate(4096)) }
        for block in blocks { allocator.free(block) }
        #expect(allocator.keptBytes == HTTP2Allocator.keptByteLimit)
        let again = try #require(allocator.allocate(4000))
        #expect(allocator.keptBytes == HTTP2Allocator.keptByteLimit - 4096)
        allocator.free(again)
        allocator.releaseAll()
        #expect(allocator.keptBytes == 0)
    }
}
