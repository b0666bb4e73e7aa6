internal import CLibUV

#if canImport(Glibc)
    import Glibc
#endif

/// Resolves a host name to one address without blocking the loop: `uv_getaddrinfo` runs the
/// system resolver (`/etc/hosts`, DNS) on libuv's thread pool and calls back on the loop.
///
/// The request owns itself (one retain, taken when it starts) until libuv calls back, exactly
/// once, whether it resolved, failed or was cancelled; ``cancel()`` only guarantees that the
/// completion will not run.
///
/// - Important: loop-confined, like every handle of the loop.
public final class UVNameResolution {
    private let request: UnsafeMutablePointer<uv_getaddrinfo_t>
    private let host: String
    private var completion: ((Result<String, UVError>) -> Void)?

    private init(host: String, _ completion: @escaping (Result<String, UVError>) -> Void) {
        request = .allocate(capacity: 1)
        self.host = host
        self.completion = completion
    }

    deinit { request.deallocate() }

    /// Starts resolving `host` (a stream socket's addresses). `completion` runs once, on the
    /// loop, with its first IPv4 address (else its first IPv6 address) as a literal, or the
    /// resolver's error (a ``UVError`` named `EAI_NONAME`, `EAI_AGAIN`...), unless ``cancel()``
    /// came first.
    /// - Throws: ``UVError`` when the request cannot start; `completion` is then not called.
    @discardableResult
    public static func start(
        on loop: UVLoop, host: String, _ completion: @escaping (Result<String, UVError>) -> Void
    ) throws(UVError) -> UVNameResolution {
        let resolution = UVNameResolution(host: host, completion)
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        resolution.request.pointee.data = Unmanaged.passRetained(resolution).toOpaque()
        let result = uv_getaddrinfo(loop.raw, resolution.request, uvGetAddrInfoTrampoline, host, nil, &hints)
        if result < 0 {
            // A request that did not start never calls back: drop the retain taken above.
            Unmanaged<UVNameResolution>.fromOpaque(resolution.request.pointee.data!).release()
            resolution.completion = nil
            throw UVError(code: result, operation: "getaddrinfo(\(host))")
        }
        return resolution
    }

    /// The completion will not run. libuv still calls back (at once when the lookup has not
    /// started on the thread pool, else when the resolver answers), releasing the request.
    public func cancel() {
        guard completion != nil else { return }
        completion = nil
        _ = request.withMemoryRebound(to: uv_req_t.self, capacity: 1) { uv_cancel($0) }
    }

    fileprivate func finish(status: Int32, _ result: UnsafeMutablePointer<addrinfo>?) {
        defer { uv_freeaddrinfo(result) }
        guard let completion else { return }
        self.completion = nil
        // The first IPv4 address, else the first one (hiredis' own order: a name whose IPv6
        // address comes first, `localhost` on many hosts, still reaches a server bound to IPv4).
        var first = result
        var entry = result
        while let current = entry {
            if current.pointee.ai_family == AF_INET {
                first = current
                break
            }
            entry = current.pointee.ai_next
        }
        guard status == 0, let first else {
            let code = status == 0 ? UV_EAI_NONAME.rawValue : status
            completion(.failure(UVError(code: code, operation: "getaddrinfo(\(host))")))
            return
        }
        var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let numeric = getnameinfo(
            first.pointee.ai_addr, first.pointee.ai_addrlen, &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST)
        guard numeric == 0 else {
            completion(.failure(UVError(code: UV_EAI_FAIL.rawValue, operation: "getaddrinfo(\(host))")))
            return
        }
        completion(.success(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
    }
}

private func uvGetAddrInfoTrampoline(
    _ request: UnsafeMutablePointer<uv_getaddrinfo_t>?, _ status: Int32, _ result: UnsafeMutablePointer<addrinfo>?
) {
    guard let request, let data = request.pointee.data else {
        uv_freeaddrinfo(result)
        return
    }
    // Balances the retain taken in start(on:host:_:).
    let owner = Unmanaged<UVNameResolution>.fromOpaque(data).takeRetainedValue()
    owner.finish(status: status, result)
}
