// The core's API is written in the time module's types (every call takes or returns an
// `AdInstant`, the loader is built on an `AdClock` and an `AdScheduler`), so a client of the core
// sees them without importing the time module too, the way swift-nio's `NIO` re-exports
// `NIOCore`. I/O modules that only need time import `AdLoaderTime` itself, not the core.
@_exported public import AdLoaderTime
