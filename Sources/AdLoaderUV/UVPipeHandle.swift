internal import CLibUV

#if canImport(Glibc)
    import Glibc
#endif

/// A `uv_pipe_t`: a Unix-socket listener or an accepted Unix-socket connection.
///
/// - Important: loop-confined; see ``UVHandle`` for the lifecycle.
public final class UVPipeHandle: UVStream {
    /// - Throws: ``UVError`` when `uv_pipe_init` fails.
    public init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_pipe_t>.size)
        try register(uv_pipe_init(loop.raw, pointer(as: uv_pipe_t.self), 0), "uv_pipe_init")
    }

    /// Binds to `path`, replacing a stale socket file left by an earlier run (never a file
    /// of another kind, never a socket something still listens on). The file is created with
    /// its final permissions (the process umask is narrowed around `bind`), so there is no
    /// window in which a wider mode lets another user connect.
    /// - Parameters:
    ///   - path: the socket's file path.
    ///   - mode: permission bits, e.g. `0o660`.
    /// - Throws: ``UVError`` `EADDRINUSE` when a running server answers on `path`, `EEXIST`
    ///   when the path is another kind of file, or what bind fails with.
    public func bind(path: String, mode: UInt32) throws(UVError) {
        var status = stat()
        if lstat(path, &status) == 0 {
            guard (status.st_mode & S_IFMT) == S_IFSOCK else {
                throw UVError(code: UV_EEXIST.rawValue, operation: "uv_pipe_bind(\(path))")
            }
            if Self.someoneListens(on: path) {
                throw UVError(code: UV_EADDRINUSE.rawValue, operation: "uv_pipe_bind(\(path))")
            }
            unlink(path)
        }
        // bind(2) creates the socket file with 0777 & ~umask. umask is process-wide: this runs
        // on the loop thread at start, before any other thread of ours creates files.
        let previous = umask(mode_t(~mode & 0o777))
        defer { umask(previous) }
        try uvCheck(uv_pipe_bind(pointer(as: uv_pipe_t.self), path), "uv_pipe_bind(\(path))")
    }

    /// True when a connect to the socket file at `path` is accepted (or only waits because
    /// the listener's backlog is full): another process serves there. A stale file refuses.
    public static func someoneListens(on path: String) -> Bool {
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { raw -> Bool in
            let bytes = Array(path.utf8)
            guard bytes.count < raw.count else { return false }
            raw.copyBytes(from: bytes)
            return true
        }
        guard fits else { return false }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 || errno == EAGAIN || errno == EINPROGRESS
    }
}
