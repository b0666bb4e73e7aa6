internal import CLibUV

/// A `uv_write_t` that owns a copy of the bytes it writes until its callback.
final class UVWriteRequest {
    private let request: UnsafeMutablePointer<uv_write_t>
    private let bytes: UnsafeMutableRawBufferPointer
    private var stream: UVStream?
    private var completion: ((UVError?) -> Void)?

    init(copying source: UnsafeRawBufferPointer, stream: UVStream, completion: @escaping (UVError?) -> Void) {
        request = .allocate(capacity: 1)
        bytes = .allocate(byteCount: source.count, alignment: 1)
        bytes.copyMemory(from: source)
        self.stream = stream
        self.completion = completion
    }

    deinit {
        request.deallocate()
        bytes.deallocate()
    }

    /// Calls `uv_write`; on success the request keeps itself alive until its callback.
    func submit(to stream: UnsafeMutablePointer<uv_stream_t>) -> Int32 {
        var buffer = uv_buf_init(bytes.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        let result = uv_write(request, stream, &buffer, 1, uvWriteTrampoline)
        if result < 0 {
            // A failed uv_write never calls back: drop the retain taken above right here.
            Unmanaged<UVWriteRequest>.fromOpaque(request.pointee.data!).release()
        }
        return result
    }

    /// Drops the stream and completion of a request that was never submitted.
    func discard() {
        stream = nil
        completion = nil
    }

    func finish(status: Int32) {
        stream?.writeFinished(byteCount: bytes.count)
        let completion = self.completion
        self.completion = nil
        stream = nil
        completion?(status < 0 ? UVError(code: status, operation: "uv_write") : nil)
    }
}

private func uvWriteTrampoline(_ request: UnsafeMutablePointer<uv_write_t>?, _ status: Int32) {
    guard let request, let data = request.pointee.data else { return }
    // Balances the retain taken in submit(to:).
    let owner = Unmanaged<UVWriteRequest>.fromOpaque(data).takeRetainedValue()
    owner.finish(status: status)
}
