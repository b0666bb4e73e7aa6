import Testing

@testable import AdLoaderGRPC

/// The open streams of a connection without a dictionary: each stream knows its place, removal
/// moves the last one into it.
@Suite struct OpenStreamsTests {
    @Test func insertAndRemoveKeepEveryOtherStreamFindable() {
        var open = OpenStreams()
        let streams = (0..<6).map { GRPCStream(id: Int32(2 * $0 + 1)) }
        for stream in streams { open.insert(stream) }
        #expect(open.count == 6)
        // Remove from the middle, the end and the start: the rest stay, each at its slot.
        for index in [2, 5, 0] {
            let removed = open.remove(streams[index])
            #expect(removed)
        }
        #expect(open.count == 3)
        #expect(Set(open.values.map(\.id)) == [3, 7, 9])
        for (slot, stream) in open.values.enumerated() { #expect(stream.slot == slot) }
        for index in [2, 5, 0] { #expect(streams[index].slot == -1) }
    }

    @Test func removingAStreamThatIsNotOpenChangesNothing() {
        var open = OpenStreams()
        let a = GRPCStream(id: 1)
        let b = GRPCStream(id: 3)
        open.insert(a)
        let removedB = open.remove(b)
        let removedA = open.remove(a)
        let removedAgain = open.remove(a)
        #expect(!removedB && removedA && !removedAgain && open.isEmpty)
        // A stream removed may be opened again (a spare reused for a new id).
        a.reset(id: 5)
        open.insert(a)
        #expect(open.values.map(\.id) == [5] && a.slot == 0)
    }

    @Test func removeAllClosesEverySlot() {
        var open = OpenStreams()
        let streams = (0..<3).map { GRPCStream(id: Int32(2 * $0 + 1)) }
        for stream in streams { open.insert(stream) }
        open.removeAll()
        #expect(open.isEmpty && streams.allSatisfy { $0.slot == -1 })
    }
}
