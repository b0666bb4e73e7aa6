public import AdLoaderUV

/// ``DeferredWork`` that runs when the test says so: ``runPending()`` stands for the end of a
/// loop iteration.
public final class ManualDeferredWork: DeferredWork {
    private var action: (() -> Bool)?
    public private(set) var isClosed = false

    public init() {}

    public var isRequested: Bool { action != nil }

    public func request(_ action: @escaping () -> Bool) {
        guard self.action == nil, !isClosed else { return }
        self.action = action
    }

    public func close() {
        isClosed = true
        action = nil
    }

    /// Runs the requested work once, as one loop iteration does.
    public func runOnce() {
        guard let action else { return }
        if !action() { self.action = nil }
    }

    /// Runs the requested work until it says nothing is left.
    public func runPending() {
        while let action {
            if !action() { self.action = nil }
        }
    }
}
