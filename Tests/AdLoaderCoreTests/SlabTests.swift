import AdLoaderCore
import Testing

@testable import AdLoaderCore

struct SlabTests {
    @Test func insertRemoveAndReuseTheMostRecentlyFreedSlot() {
        var slab = Slab<AdHandle, String>()
        let a = slab.insert("a")
        let b = slab.insert("b")
        let c = slab.insert("c")
        #expect([a.index, b.index, c.index] == [0, 1, 2])
        #expect(slab.count == 3)
        #expect(slab.remove(b) == "b")
        #expect(slab.remove(a) == "a")
        #expect(slab.count == 1)
        // Freed slots are reused, most recent first: handles stay dense.
        #expect(slab.insert("d") == a)
        #expect(slab.insert("e") == b)
        #expect(slab.insert("f").index == 3)
        #expect([slab[a], slab[b], slab[c]] == ["d", "e", "c"])
    }

    @Test func editsThroughTheHandleChangeTheStoredRecord() {
        var slab = Slab<LeaseHandle, [Int]>()
        let handle = slab.insert([1])
        slab[handle].append(2)
        slab[handle][0] = 7
        #expect(slab[handle] == [7, 2])
        #expect(slab.remove(handle) == [7, 2])
        #expect(slab.count == 0)
    }

    @Test func manyInsertsAndRemovesKeepEveryLiveRecord() {
        var slab = Slab<AdHandle, Int>()
        var live: [AdHandle: Int] = [:]
        var generator = SplitMix64(seed: 5)
        var mostLive = 0
        for value in 0..<5_000 {
            if !live.isEmpty && generator.next() % 3 == 0 {
                let handle = live.keys.sorted { $0.index < $1.index }[Int(generator.next() % UInt64(live.count))]
                #expect(slab.remove(handle) == live.removeValue(forKey: handle))
            } else {
                let handle = slab.insert(value)
                #expect(live[handle] == nil)
                live[handle] = value
                mostLive = max(mostLive, live.count)
            }
        }
        #expect(slab.count == live.count)
        #expect(live.allSatisfy { slab[$0.key] == $0.value })
        // Dense: no handle beyond the most records ever live at once.
        #expect(live.keys.allSatisfy { $0.index < mostLive })
    }
}
