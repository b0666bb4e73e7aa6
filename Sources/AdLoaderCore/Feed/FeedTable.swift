/// The planned feeds of one loader instance, bounded by count and idle time.
///
/// Feeds are found by ``FeedKey``; each loader's feeds wait in a first-in first-out queue per
/// idle timeout (one per distinct `feedIdleTimeout`, so each queue is in deadline order), whose
/// entries go stale when their feed is called again: expiring idle feeds costs O(1) per call
/// and per expired feed.
struct FeedTable {
    struct QueueEntry {
        var key: FeedKey
        var touch: UInt64
        var deadline: Int64
    }

    /// A first-in first-out queue of idle deadlines.
    struct Queue {
        var entries: [QueueEntry] = []
        var head = 0

        var first: QueueEntry? { head < entries.count ? entries[head] : nil }

        mutating func append(_ entry: QueueEntry) { entries.append(entry) }

        mutating func removeFirst() {
            head += 1
            if head >= 64 && head * 2 >= entries.count {
                entries.removeFirst(head)
                head = 0
            }
        }
    }

    var feeds: [FeedKey: FeedState] = [:]
    /// Feeds held per loader name (for ``LoaderConfiguration/maximumFeeds``).
    var counts: [String: Int] = [:]
    /// By idle timeout in milliseconds.
    var queues: [Int64: Queue] = [:]
    var stats = FeedStats()
    var timer: (any ScheduledTask)?
    var timerDeadline: Int64?
    var nextTouch: UInt64 = 0

    /// Records a call to `feed` at `now`: its idle deadline moves to `now + idleTimeout`.
    mutating func touch(_ feed: FeedState, now: Int64, idleTimeout: Int64) {
        nextTouch += 1
        feed.touch = nextTouch
        feed.lastCallAt = now
        queues[idleTimeout, default: Queue()].append(
            QueueEntry(key: feed.key, touch: nextTouch, deadline: now &+ idleTimeout))
    }

    /// The earliest deadline of a queue's first entry (stale entries included: a wakeup for
    /// one only pops it).
    var nextDeadline: Int64? { queues.values.compactMap { $0.first?.deadline }.min() }

    /// Removes and returns the feeds idle at `now`.
    mutating func removeIdle(at now: Int64) -> [FeedState] {
        var removed: [FeedState] = []
        for timeout in queues.keys.sorted() {
            while let entry = queues[timeout]!.first, entry.deadline <= now {
                queues[timeout]!.removeFirst()
                guard let feed = feeds[entry.key], feed.touch == entry.touch else { continue }
                feeds[entry.key] = nil
                counts[entry.key.loader, default: 1] -= 1
                removed.append(feed)
            }
            if queues[timeout]!.first == nil { queues[timeout] = nil }
        }
        return removed
    }

    /// Removes every feed of `loader` (nil: all), returning them.
    mutating func removeAll(loader: String?) -> [FeedState] {
        let keys = feeds.keys.filter { loader == nil || $0.loader == loader }
        var removed: [FeedState] = []
        for key in keys {
            removed.append(feeds.removeValue(forKey: key)!)
            counts[key.loader, default: 1] -= 1
        }
        return removed
    }
}
