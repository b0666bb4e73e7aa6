import AdLoaderCore
import Testing

@testable import AdLoaderCore

/// A handle for heap tests, written as an integer literal.
struct TestHandle: SlabHandle, ExpressibleByIntegerLiteral {
    let index: Int
    init(index: Int) { self.index = index }
    init(integerLiteral value: Int) { index = value }
}

struct DeadlineHeapTests {
    @Test func popsInDeadlineThenSequenceOrder() {
        var heap = DeadlineHeap<TestHandle>()
        let deadlines: [Int64] = [50, 10, 30, 10, 70, 20, 30, 5]
        for (handle, deadline) in deadlines.enumerated() {
            heap.insert(handle: TestHandle(index: handle), deadline: deadline, sequence: UInt64(100 - handle))
        }
        #expect(heap.first?.deadline == 5)
        var popped: [Int] = []
        while let entry = heap.popFirst() { popped.append(entry.handle.index) }
        // Ties on 10 and 30: the lower sequence (the higher handle here) first.
        #expect(popped == [7, 3, 1, 5, 6, 2, 0, 4])
        #expect(heap.isEmpty)
    }

    @Test func removesAnyHandleAndKeepsOrder() {
        var heap = DeadlineHeap<TestHandle>()
        var generator = SplitMix64(seed: 42)
        var expected: [Int: Int64] = [:]
        for handle in 0..<500 {
            let deadline = Int64(generator.next() % 1_000)
            heap.insert(handle: TestHandle(index: handle), deadline: deadline, sequence: UInt64(handle))
            expected[handle] = deadline
        }
        for handle in stride(from: 0, to: 500, by: 3) {
            #expect(heap.remove(handle: TestHandle(index: handle))?.deadline == expected[handle])
            expected[handle] = nil
        }
        #expect(heap.remove(handle: 0) == nil)
        #expect(heap.count == expected.count)
        var last: (Int64, UInt64) = (.min, 0)
        while let entry = heap.popFirst() {
            #expect((last.0, last.1) < (entry.deadline, entry.sequence))
            #expect(expected.removeValue(forKey: entry.handle.index) == entry.deadline)
            last = (entry.deadline, entry.sequence)
        }
        #expect(expected.isEmpty)
    }

    @Test func handlesCanBeReinsertedAfterRemoval() {
        var heap = DeadlineHeap<TestHandle>()
        heap.insert(handle: 3, deadline: 10, sequence: 0)
        #expect(heap.contains(3))
        heap.removeAll()
        #expect(!heap.contains(3))
        heap.insert(handle: 3, deadline: 20, sequence: 0)
        #expect(heap.first == DeadlineHeap<TestHandle>.Entry(deadline: 20, sequence: 0, handle: 3))
    }
}

struct IdentifiersTests {
    @Test func adIDsCarryTheSeedAndACounter() {
        var ids = IdentifierGenerator(seed: 0xABC)
        #expect(ids.nextAdID() == "abc-1")
        #expect(ids.nextAdID() == "abc-2")
    }

    @Test func leaseIDsAreUniqueSeedDependentAndDecodeToTheirSlot() {
        let first = IdentifierGenerator(seed: 1)
        let second = IdentifierGenerator(seed: 2)
        var seen = Set<UInt64>()
        for slot in [0, 1, 2, 1_000, Int(UInt32.max)] {
            for generation: UInt32 in [
                0, 1, 2, 3, 77, IdentifierGenerator.generationLimit - 2, IdentifierGenerator.generationLimit - 1,
            ] {
                let id = first.leaseID(slot: slot, generation: generation)
                seen.insert(id)
                #expect(first.leaseSlot(of: id) == (slot, generation))
                #expect(second.leaseSlot(of: id) != (slot, generation))
            }
        }
        #expect(seen.count == 35)
        for slot in 0..<100 {
            for generation: UInt32 in 0..<100 { seen.insert(first.leaseID(slot: slot, generation: generation)) }
        }
        #expect(seen.count == 35 + 10_000 - 15)  // slots 0...2 at generations 0...3 and 77 were counted above
        #expect(IdentifierGenerator(seed: 1).leaseID(slot: 5, generation: 6) != second.leaseID(slot: 5, generation: 6))
    }

    @Test func leaseIDsCarryTheReplicaInTheirTopBitsAndStillDecode() {
        var ids = IdentifierGenerator(seed: 7)
        var seen = Set<UInt64>()
        for replica in [0, 1, 2, 3, IdentifierGenerator.maximumReplica] {
            ids.replica = replica
            for slot in [0, 1, 9_999, Int(UInt32.max)] {
                for generation: UInt32 in [0, 1, IdentifierGenerator.generationLimit - 1] {
                    let id = ids.leaseID(slot: slot, generation: generation)
                    #expect(IdentifierGenerator.replica(of: id) == replica)
                    #expect(ids.leaseSlot(of: id) == (slot, generation))
                    seen.insert(id)
                }
            }
        }
        #expect(seen.count == 5 * 4 * 3)
        // Replica 0 keeps ids below 2^52: an unconfigured daemon's ids look as before in size.
        ids.replica = 0
        #expect(ids.leaseID(slot: 12, generation: 3) < 1 << 52)
    }

    @Test func unmixInvertsMix() {
        var generator = SplitMix64(seed: 3)
        for value in [0, 1, UInt64.max, 0x8000_0000_0000_0000] + (0..<1_000).map({ _ in generator.next() }) {
            #expect(SplitMix64.unmix(SplitMix64.mix(value)) == value)
            #expect(SplitMix64.mix(SplitMix64.unmix(value)) == value)
        }
    }

    @Test func splitMixIsDeterministicAndUnitIsInRange() {
        var a = SplitMix64(seed: 9)
        var b = SplitMix64(seed: 9)
        for _ in 0..<1_000 {
            let unit = a.unit()
            #expect(unit >= 0 && unit < 1)
            #expect(unit == b.unit())
        }
    }
}
