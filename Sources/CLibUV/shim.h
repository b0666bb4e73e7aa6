#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H
#include <sys/ioctl.h>
#include <uv.h>

/// Bytes the kernel holds for `stream` that no read has taken yet (FIONREAD), or -1 when the
/// stream has no descriptor or the query fails. ioctl is variadic, so Swift calls it here.
static inline int clibuv_unread_bytes(const uv_stream_t *stream) {
    uv_os_fd_t fd;
    if (uv_fileno((const uv_handle_t *)stream, &fd) != 0) return -1;
    int count = 0;
    if (ioctl(fd, FIONREAD, &count) != 0) return -1;
    return count;
}
#endif
