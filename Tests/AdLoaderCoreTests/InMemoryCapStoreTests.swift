import AdLoaderCore
import AdLoaderTestSupport
import Testing

/// The shared cap-store behaviour, against the in-memory store (not persistent).
struct InMemoryCapStoreTests {
    @Test(arguments: CapStoreBehaviour.names)
    func behaviour(_ name: String) {
        let failures = CapStoreBehaviour.run(name, persistent: false) { InMemoryCapStore() }
        #expect(failures == [])
    }

    @Test func anOutageFailsEveryCallAndEndsWhenCleared() {
        let store = InMemoryCapStore()
        let key = CapKey(
            loader: "l", deviceID: "d", sessionID: "s", day: LocalDay(daysSinceEpoch: 1), utcOffsetSeconds: 0)
        store.failure = CapStoreError("down")
        var result: Result<AppOpenCounts, CapStoreError>?
        store.confirmShow(for: key, at: AdInstant(unixMilliseconds: 0), sessionTimeout: .seconds(1)) { result = $0 }
        #expect(result == .failure(CapStoreError("down")))
        store.failure = nil
        store.confirmShow(for: key, at: AdInstant(unixMilliseconds: 0), sessionTimeout: .seconds(1)) { result = $0 }
        #expect(result == .success(AppOpenCounts(session: 1, day: 1)))
    }
}
