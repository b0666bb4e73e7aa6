import Testing

/// Every end-to-end suite nests here so that they run one after another: each starts its own
/// daemon, and several pushing megabytes through loopback at once (the output-limit checks)
/// would compete for the kernel's socket memory and the two CPUs.
@Suite("adloaderd end to end", .serialized, .timeLimit(.minutes(1)))
enum EndToEnd {}
