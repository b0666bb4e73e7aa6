/// Counts the frames of the HTTP/2 flood family a client sends, per fixed window: stream
/// resets (rapid reset) and control frames (SETTINGS, PING, PRIORITY, empty DATA or HEADERS).
/// A count past its limit within one window is abuse: the connection ends with GOAWAY
/// ENHANCE_YOUR_CALM.
///
/// A value type fed with the clock's milliseconds, so tests drive it without sockets.
struct FloodGuard: Hashable {
    enum Kind: Hashable { case reset, control }

    let windowMilliseconds: Int64
    let maxResets: Int
    let maxControlFrames: Int
    private var windowStart: Int64 = .min
    private(set) var resets = 0
    private(set) var controlFrames = 0

    init(limits: HTTP2Limits) {
        windowMilliseconds = limits.floodWindowMilliseconds
        maxResets = limits.maxResetsPerWindow
        maxControlFrames = limits.maxControlFramesPerWindow
    }

    /// Counts one frame received at `now`.
    /// - Returns: a description of the flood when this frame is one too many, else nil.
    mutating func count(_ kind: Kind, at now: Int64) -> String? {
        if windowStart == .min || now - windowStart >= windowMilliseconds {
            windowStart = now
            resets = 0
            controlFrames = 0
        }
        switch kind {
        case .reset:
            resets += 1
            if resets > maxResets { return "more than \(maxResets) stream resets in \(windowMilliseconds) ms" }
        case .control:
            controlFrames += 1
            if controlFrames > maxControlFrames {
                return "more than \(maxControlFrames) SETTINGS, PING, PRIORITY or empty frames in \(windowMilliseconds) ms"
            }
        }
        return nil
    }
}
