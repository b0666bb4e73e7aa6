/// What this build is: the one version source of the daemon, the CLI, the ServerInfo call
/// and the `adloader_build_info` metric.
public enum BuildInfo {
    /// The release version (semantic versioning); bumped by hand with each release.
    public static let version = "0.21.0"
    /// The protocol this build speaks (the framed preface's and the proto package's version).
    public static let protocolVersion = "adloader.v1"
    /// The build: the Swift compiler configuration the binary was built in.
    public static let build: String = {
        #if DEBUG
            "debug"
        #else
            "release"
        #endif
    }()
}
