import CLibUV
#if canImport(Glibc)
import Glibc
#endif

/// A `uv_pipe_t`: a Unix-socket listener or an accepted Unix-socket connection.
///
/// - Important: loop-confined; see ``UVHandle`` for the lifecycle.
final class UVPipeHandle: UVStream {
    /// - Throws: ``UVError`` when `uv_pipe_init` fails.
    init(loop: UVLoop) throws(UVError) {
        super.init(loop: loop, byteCount: MemoryLayout<uv_pipe_t>.size)
        try register(uv_pipe_init(loop.raw, pointer(as: uv_pipe_t.self), 0), "uv_pipe_init")
    }

    /// Binds to `path`, replacing a stale socket file left by an earlier run (never a file
    /// of another kind), then sets the file's permissions.
    /// - Parameters:
    ///   - path: the socket's file path.
    ///   - mode: permission bits, e.g. `0o660`.
    /// - Throws: ``UVError`` when the path is taken by something else or bind/chmod fail.
    func bind(path: String, mode: UInt32) throws(UVError) {
        var status = stat()
        if lstat(path, &status) == 0 {
            guard (status.st_mode & S_IFMT) == S_IFSOCK else {
                throw UVError(code: UV_EEXIST.rawValue, operation: "uv_pipe_bind(\(path))")
            }
            unlink(path)
        }
        try uvCheck(uv_pipe_bind(pointer(as: uv_pipe_t.self), path), "uv_pipe_bind(\(path))")
        if chmod(path, mode_t(mode)) != 0 {
            throw UVError(code: -errno, operation: "chmod(\(path))")
        }
    }
}
