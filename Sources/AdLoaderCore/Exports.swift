// The core's API is written in the time module's types (every call takes or returns an
// `AdInstant`, the loader is built on an `AdClock` and an `AdScheduler`) and in the model's values
// (`Ad`, `Lease`, `BorrowResult`, `PoolStats`...), so a client of the core sees them without
// importing those modules too, the way swift-nio's `NIO` re-exports `NIOCore`. Modules that only
// need time or the model (the wire, the client library, I/O modules) import them, not the core.
@_exported public import AdLoaderModel
@_exported public import AdLoaderTime
