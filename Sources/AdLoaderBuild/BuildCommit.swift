/// The commit a binary was built from, taken at build time by Plugins/GitCommitPlugin (which
/// writes `GitCommit.swift` beside this file in the build directory, never in the tree).
///
/// Only the daemon and the CLI import this module: a new commit recompiles them and nothing
/// below them. Outside a git checkout (a source tarball, a build without git) the hash is
/// "unknown" and the build still succeeds.
package enum BuildCommit {
    /// 12 hex digits, or "unknown".
    package static let hash = GitCommit.hash

    /// The build string `--version`, ServerInfo and `adloader_build_info` show: the compiler
    /// configuration and the commit, e.g. `release, commit 1a2b3c4d5e6f`.
    package static func build(configuration: String) -> String { "\(configuration), commit \(hash)" }
}
