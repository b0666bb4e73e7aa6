internal import CLibUV

extension UVTCPHandle {
    /// Connects this (freshly initialised) handle to an IPv4 or IPv6 literal address, without
    /// waiting: `completion` runs once, on the loop, with nil when connected or the error
    /// (`ECONNREFUSED`, `ETIMEDOUT`, `ECANCELED` when the handle closed first).
    /// - Throws: ``UVError`` when the connect cannot even start (`EINVAL` for a host that is
    ///   not an IP literal); `completion` is then not called.
    public func connect(host: String, port: Int, _ completion: @escaping (UVError?) -> Void) throws(UVError) {
        var storage = try Self.socketAddress(host: host, port: port)
        let request = UVConnectRequest(completion)
        let result = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                request.submit(self.pointer(as: uv_tcp_t.self), address)
            }
        }
        try uvCheck(result, "uv_tcp_connect")
    }
}

/// A `uv_connect_t` that keeps itself (and its completion) alive until its callback.
final class UVConnectRequest {
    private let request: UnsafeMutablePointer<uv_connect_t>
    private var completion: ((UVError?) -> Void)?

    init(_ completion: @escaping (UVError?) -> Void) {
        request = .allocate(capacity: 1)
        self.completion = completion
    }

    deinit { request.deallocate() }

    /// Calls `uv_tcp_connect`; on success the request holds a retain of itself until its callback.
    func submit(_ handle: UnsafeMutablePointer<uv_tcp_t>, _ address: UnsafePointer<sockaddr>) -> Int32 {
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        let result = uv_tcp_connect(request, handle, address, uvConnectTrampoline)
        if result < 0 {
            // A failed uv_tcp_connect never calls back: drop the retain taken above right here.
            Unmanaged<UVConnectRequest>.fromOpaque(request.pointee.data!).release()
            completion = nil
        }
        return result
    }

    fileprivate func finish(status: Int32) {
        let completion = self.completion
        self.completion = nil
        completion?(status < 0 ? UVError(code: status, operation: "connect") : nil)
    }
}

private func uvConnectTrampoline(_ request: UnsafeMutablePointer<uv_connect_t>?, _ status: Int32) {
    guard let request, let data = request.pointee.data else { return }
    // Balances the retain taken in submit(_:_:).
    let owner = Unmanaged<UVConnectRequest>.fromOpaque(data).takeRetainedValue()
    owner.finish(status: status)
}
