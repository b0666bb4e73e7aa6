package import AdLoaderCore

/// Wraps the app-open cap store to measure it from the outside, as ``MeasuredDemandSource``
/// does for sources: operations by kind and result, and whether the store answers (the last
/// answer succeeded; a store never asked counts as up). A Redis that went away shows here
/// (`adloader_cap_store_up` 0, errors counted) and in the log, instead of only in AppOpen
/// answers carrying `store_unavailable`.
///
/// - Important: loop-confined: the completions run on the loop, as the store promises.
package final class MeasuredCapStore: CapStore {
    /// Operation kinds, in ``operations`` order.
    package static let operationNames = ["counts", "confirm_show"]

    /// `type` of the configuration: memory, sqlite, redis.
    package let kind: String
    private let wrapped: any CapStore
    /// Per operation: successes, failures.
    package private(set) var operations: [(ok: UInt64, failed: UInt64)] = [(0, 0), (0, 0)]
    package private(set) var isUp = true
    /// Called when ``isUp`` changes, with the error that made it down (nil when up again).
    package var onChange: ((Bool, CapStoreError?) -> Void)?

    package init(kind: String, wrapping store: any CapStore) {
        self.kind = kind
        wrapped = store
    }

    package func counts(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        wrapped.counts(for: key, at: now, sessionTimeout: sessionTimeout) { [weak self] result in
            self?.answered(0, result)
            completion(result)
        }
    }

    package func confirmShow(
        for key: CapKey, at now: AdInstant, sessionTimeout: Duration,
        completion: @escaping (Result<AppOpenCounts, CapStoreError>) -> Void
    ) {
        wrapped.confirmShow(for: key, at: now, sessionTimeout: sessionTimeout) { [weak self] result in
            self?.answered(1, result)
            completion(result)
        }
    }

    package func close() { wrapped.close() }

    private func answered(_ operation: Int, _ result: Result<AppOpenCounts, CapStoreError>) {
        let wasUp = isUp
        switch result {
        case .success:
            operations[operation].ok += 1
            isUp = true
            if !wasUp { onChange?(true, nil) }
        case .failure(let error):
            operations[operation].failed += 1
            isUp = false
            if wasUp { onChange?(false, error) }
        }
    }
}
