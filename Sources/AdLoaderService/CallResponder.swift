import AdLoaderWire

/// How the service answers a call: what a transport implements, per connection or per call.
///
/// A call is identified by the id the transport gave it in
/// ``AdLoaderService/handle(_:callID:timeout:responder:)``. Every call gets exactly one final
/// answer: an `answer(...)` (status OK) or ``finish(_:status:)``. A Watch streams events with
/// ``stream(_:event:)`` before its final status.
///
/// - Important: loop-confined, like the service.
public protocol CallResponder: AnyObject {
    /// Whether answers can still be delivered (false once the client went away or the
    /// transport stopped reading calls).
    var isOpen: Bool { get }
    /// Bytes answered and not yet taken by the client; the service ends a Watch whose client
    /// reads too slowly (``ServerLimits/maxUnsentOutputPerConnection``).
    var unsentByteCount: Int { get }

    /// The final OK answer of a Borrow.
    func answer(_ callID: UInt64, borrow: BorrowResponseMessage)
    /// The final OK answer of a Return.
    func answer(_ callID: UInt64, returned: ReturnResponseMessage)
    /// The final OK answer of a Prefetch.
    func answer(_ callID: UInt64, prefetch: PrefetchResponseMessage)
    /// The final OK answer of a Stats; its size was checked against the message size limit.
    func answer(_ callID: UInt64, stats: StatsResponseMessage)
    /// The final OK answer of an AppOpen.
    func answer(_ callID: UInt64, appOpen: AppOpenResponseMessage)
    /// The final OK answer of a SetLoaderEnabled.
    func answer(_ callID: UInt64, setLoaderEnabled: SetLoaderEnabledResponseMessage)
    /// The final OK answer of a Reload.
    func answer(_ callID: UInt64, reload: ReloadResponseMessage)
    /// One streamed message of an open Watch.
    func stream(_ callID: UInt64, event: EventMessage)
    /// The final answer with a status and no message.
    func finish(_ callID: UInt64, status: Status)
    /// The service ended an ``OpenCall`` by itself (served, deadline, slow watcher, drain):
    /// forget it. Its final answer follows at once.
    func openCallEnded(_ call: OpenCall)
}
