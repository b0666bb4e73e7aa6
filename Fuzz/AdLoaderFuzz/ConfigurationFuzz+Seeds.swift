extension ConfigurationFuzz {
    public static var seeds: [(name: String, bytes: [UInt8])] {
        let texts: [(String, String)] = [
            ("empty-object", "{}"),
            (
                "scalars",
                """
                { "listeners": { "host": "::1", "port": 0, "unixSocket": "/tmp/adloaderd.sock", "unixSocketMode": "0600" },
                  "limits": { "maxMessageSize": "64KiB", "maxConnections": 10, "maxCallsInFlightPerConnection": 16,
                              "maxParkedBorrows": 0, "idleTimeout": "250ms", "partialFrameTimeout": 1.5,
                              "maxUnsentOutputPerConnection": 1048576, "shutdownGracePeriod": "1h",
                              "maxIdentifierLength": 128 },
                  "log": { "level": "debug" } }
                """
            ),
            (
                "sources-loaders",
                """
                { "sources": { "slow": { "type": "synthetic", "latency": "2s", "latencyJitter": "100ms", "fillRate": 0.5,
                                         "errorRate": 0.1, "unreachableRate": 0.1, "seed": 42 } },
                  "loaders": { "feed": { "source": "slow", "keywords": ["a", "b"], "contentURL": "https://x.test/",
                                         "nonPersonalized": true, "targeting": { "k": "v" }, "numberOfAdvertisements": 3,
                                         "maximumRetainedAdvertisements": 20, "lifetime": "30m", "sweepInterval": 10,
                                         "showCountThreshold": 2, "leaseTimeout": "1m", "maximumBorrowWait": "5s",
                                         "maximumPools": 7, "enabled": false,
                                         "retry": { "delay": 1, "multiplier": 2, "maximumDelay": "1m", "jitter": 0.2,
                                                    "maximumCount": 3, "probeInterval": "10s" } },
                               "other": { "source": "synthetic", "contentURL": null, "format": "interstitial" } } }
                """
            ),
            (
                "json-edges",
                #"""
                { "loaders": { "\u00e9\ud83c\udf89\n\"\\\/\b\f\r\t": { "keywords": [], "targeting": {},
                  "numberOfAdvertisements": 1e0, "lifetime": -0.0, "maximumPools": 1000000 } } }
                """#
            ),
            (
                "numbers",
                #"{ "limits": { "maxMessageSize": "2147483647B", "idleTimeout": 1E+11, "maxConnections": -1 } }"#
            ),
            ("nested", String(repeating: "[", count: 70) + String(repeating: "]", count: 70)),
            ("bad-escape", #"{ "log": { "level": "\ud800\u0041" } }"#),
            ("duplicate", #"{ "log": {}, "log": {} }"#),
            ("flags", "--port 0 --max-message-size=1GiB --synthetic-seed 18446744073709551615 --log-level warning\n{}"),
            ("flag-errors", "--port=65536 --unix-socket-mode 0999\n{ \"listeners\": { \"host\": \"localhost\" } }"),
            ("help", "--help\n"),
            ("not-object", "[1, 2, 3]"),
        ]
        return texts.map { ($0.0, Array($0.1.utf8)) }
    }
}
