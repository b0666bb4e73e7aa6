/// Counts the frames of the HTTP/2 flood family a client sends, per fixed window: stream
/// resets (rapid reset), control frames (SETTINGS, PING, PRIORITY, empty DATA or HEADERS), and
/// the resets the server sends itself because a frame was a stream error (MadeYouReset,
/// CVE-2025-8671: a content-length that lies, an invalid header, a header list far over the
/// limit; the client never resets, yet its streams stop counting toward
/// SETTINGS_MAX_CONCURRENT_STREAMS). A count past its limit within one window is abuse: the
/// connection ends with GOAWAY ENHANCE_YOUR_CALM.
///
/// A value type fed with the clock's milliseconds, so tests drive it without sockets.
struct FloodGuard: Hashable {
    enum Kind: Hashable {
        /// An RST_STREAM from the client.
        case reset
        case control
        /// An RST_STREAM with an error code the server sent (its limit is the client's).
        case sentReset
    }

    let windowMilliseconds: Int64
    let maxResets: Int
    let maxControlFrames: Int
    private var windowStart: Int64 = .min
    private(set) var resets = 0
    private(set) var controlFrames = 0
    private(set) var sentResets = 0

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
            sentResets = 0
        }
        switch kind {
        case .reset:
            resets += 1
            if resets > maxResets { return "more than \(maxResets) stream resets in \(windowMilliseconds) ms" }
        case .control:
            controlFrames += 1
            if controlFrames > maxControlFrames {
                return
                    "more than \(maxControlFrames) SETTINGS, PING, PRIORITY or empty frames in \(windowMilliseconds) ms"
            }
        case .sentReset:
            sentResets += 1
            if sentResets > maxResets {
                return
                    "more than \(maxResets) stream resets sent to the client in \(windowMilliseconds) ms (malformed frames)"
            }
        }
        return nil
    }
}
