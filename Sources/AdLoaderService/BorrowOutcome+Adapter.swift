import AdLoaderCore

// TEMPORARY: the core's borrow is being changed to answer by return value (branch `core`);
// this adapter gives the service that API on today's core and goes when the branch lands.

/// How a borrow was answered.
public enum BorrowOutcome {
    case answered(BorrowResult)
    case parked(any ParkedBorrow)
    case parkingRefused
}

extension NativeAdvertisementLoader {
    private final class Box {
        var result: BorrowResult?
        var returned = false
    }

    func borrow(
        adUnitID: String, loader: String, slot: String?, wait: Duration, mayPark: Bool,
        whenServed: @escaping (BorrowResult) -> Void
    ) throws(LoaderError) -> BorrowOutcome {
        if !mayPark, wait > .zero, let maximum = configurations[loader]?.maximumBorrowWait, wait > maximum {
            throw LoaderError(code: .invalidArgument, field: "wait_ms", message: "must be 0...\(maximum.milliseconds) ms")
        }
        let box = Box()
        let handle = try borrow(adUnitID: adUnitID, loader: loader, slot: slot, wait: mayPark ? wait : .zero) { result in
            if box.returned { whenServed(result) } else { box.result = result }
        }
        box.returned = true
        if let result = box.result {
            return !mayPark && wait > .zero && result == .noAdYet ? .parkingRefused : .answered(result)
        }
        return .parked(handle!)
    }
}
