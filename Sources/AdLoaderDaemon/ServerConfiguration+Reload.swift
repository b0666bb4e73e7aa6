import AdLoaderCore

/// What a configuration reload may change: the loaders, the tokens (``reloadableKeys``) and the
/// TLS files and client-certificate mode (not TLS on or off). Everything else applies only at
/// restart, and a reload whose configuration changes it is refused naming the setting.
extension ServerConfiguration {
    /// The first setting in which `self` differs from `running` that a reload cannot apply,
    /// as its dotted key (`listeners.port`, `sources.synthetic`), or nil when only loaders
    /// differ.
    ///
    /// Restart-only: every setting of the listeners, admin, auth, log, limits, http2 and
    /// capStore sections, and the demand sources (a source cannot be added, removed or
    /// changed while loaders hold its ads and its requests are in flight). Also restart-only:
    /// the first loader of format appOpen in a daemon started without one (the cap store is
    /// opened at start only when a loader needs it).
    /// - Parameter storeOpened: whether the daemon opened its app-open cap store at start (nil:
    ///   whether `running` has a loader of format appOpen).
    func restartOnlyChange(from running: ServerConfiguration, storeOpened: Bool? = nil) -> String? {
        for table in Self.scalarSections {
            for row in table.keys where row.show(self) != row.show(running) {
                let key = "\(table.section).\(row.key)"
                if Self.reloadableKeys.contains(key) { continue }
                return key
            }
        }
        if tls.isEnabled != running.tls.isEnabled { return "tls.certificateFile" }
        var auth = self.auth
        (auth.tokens, auth.namedTokens, auth.tokenFiles) = (
            running.auth.tokens, running.auth.namedTokens, running.auth.tokenFiles
        )
        // Fields no table row shows (none today) are still compared, by section.
        let sections: [(String, Bool)] = [
            ("listeners", listeners == running.listeners), ("admin", admin == running.admin),
            ("auth", auth == running.auth), ("limits", limits == running.limits),
            ("http2", http2Limits == running.http2Limits),
            ("log", logLevel == running.logLevel && logWarningInterval == running.logWarningInterval),
            ("capStore", capStore == running.capStore), ("poolStore", poolStore == running.poolStore),
        ]
        if let (section, _) = sections.first(where: { !$0.1 }) { return section }
        let sourceNames = Set(sources.keys).union(running.sources.keys).sorted()
        if let name = sourceNames.first(where: { sources[$0] != running.sources[$0] }) { return "sources.\(name)" }
        if !(storeOpened ?? running.loaders.contains(where: { $0.format == .appOpen })),
            let appOpen = loaders.first(where: { $0.format == .appOpen })
        {
            return "loaders.\(appOpen.name).format"
        }
        return nil
    }

    /// The settings a reload applies besides the loaders: tokens (added, removed, files re-read)
    /// and TLS files and client-certificate mode (new handshakes use them). Turning TLS on or
    /// off stays restart-only.
    static let reloadableKeys: Set<String> = [
        "auth.tokens", "auth.namedTokens", "auth.tokenFiles",
        "tls.certificateFile", "tls.keyFile", "tls.clientCAFile", "tls.clientAuth", "tls.handshakeTimeout",
    ]
}
