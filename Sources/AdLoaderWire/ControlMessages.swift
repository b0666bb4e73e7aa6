public import AdLoaderModel
internal import CAdLoaderProto

/// `SetLoaderEnabledRequest`: disables or enables a loader at run time.
public struct SetLoaderEnabledRequestMessage: WireMessage {
    /// Required: a configured loader's name.
    public var loader: String
    public var enabled: Bool

    public init(loader: String, enabled: Bool) {
        self.loader = loader
        self.enabled = enabled
    }

    public var stringFieldWithNUL: String? { firstFieldWithNUL(["loader": loader]) }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "SetLoaderEnabledRequest", unpack: adloader__v1__set_loader_enabled_request__unpack,
            free: adloader__v1__set_loader_enabled_request__free_unpacked
        ) { m in
            SetLoaderEnabledRequestMessage(loader: swiftString(m.pointee.loader), enabled: m.pointee.enabled != 0)
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__SetLoaderEnabledRequest()
            adloader__v1__set_loader_enabled_request__init(&m)
            m.loader = arena.cString(loader)
            m.enabled = enabled ? 1 : 0
            appendPacked(&m, to: &buffer)
        }
    }
}

/// `SetLoaderEnabledResponse`: whether the call changed the loader's state.
public struct SetLoaderEnabledResponseMessage: WireMessage {
    /// False when the loader already was in the state asked for.
    public var changed: Bool

    public init(changed: Bool) { self.changed = changed }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "SetLoaderEnabledResponse", unpack: adloader__v1__set_loader_enabled_response__unpack,
            free: adloader__v1__set_loader_enabled_response__free_unpacked
        ) { m in SetLoaderEnabledResponseMessage(changed: m.pointee.changed != 0) }
    }

    public func encode(into buffer: inout [UInt8]) {
        var m = Adloader__V1__SetLoaderEnabledResponse()
        adloader__v1__set_loader_enabled_response__init(&m)
        m.changed = changed ? 1 : 0
        appendPacked(&m, to: &buffer)
    }
}

/// `ReloadRequest`: re-read the configuration file (no fields).
public struct ReloadRequestMessage: WireMessage {
    public init() {}

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "ReloadRequest", unpack: adloader__v1__reload_request__unpack,
            free: adloader__v1__reload_request__free_unpacked
        ) { _ in ReloadRequestMessage() }
    }

    public func encode(into buffer: inout [UInt8]) {}
}

/// `ReloadResponse`: what the reload did to each loader.
public struct ReloadResponseMessage: WireMessage {
    public var result: ReconfigureResult

    public init(result: ReconfigureResult) { self.result = result }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "ReloadResponse", unpack: adloader__v1__reload_response__unpack,
            free: adloader__v1__reload_response__free_unpacked
        ) { m in
            let p = m.pointee
            var result = ReconfigureResult()
            result.added = swiftStrings(p.added, count: p.n_added)
            result.removed = swiftStrings(p.removed, count: p.n_removed)
            result.changedKeepingPools = swiftStrings(p.changed_keeping_pools, count: p.n_changed_keeping_pools)
            result.changedDroppingPools = swiftStrings(p.changed_dropping_pools, count: p.n_changed_dropping_pools)
            result.unchanged = swiftStrings(p.unchanged, count: p.n_unchanged)
            return ReloadResponseMessage(result: result)
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__ReloadResponse()
            adloader__v1__reload_response__init(&m)
            m.n_added = result.added.count
            m.added = arena.cStringArray(result.added)
            m.n_removed = result.removed.count
            m.removed = arena.cStringArray(result.removed)
            m.n_changed_keeping_pools = result.changedKeepingPools.count
            m.changed_keeping_pools = arena.cStringArray(result.changedKeepingPools)
            m.n_changed_dropping_pools = result.changedDroppingPools.count
            m.changed_dropping_pools = arena.cStringArray(result.changedDroppingPools)
            m.n_unchanged = result.unchanged.count
            m.unchanged = arena.cStringArray(result.unchanged)
            appendPacked(&m, to: &buffer)
        }
    }
}
