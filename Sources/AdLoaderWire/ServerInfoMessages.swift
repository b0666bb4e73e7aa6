internal import CAdLoaderProto

/// `ServerInfoRequest`: no fields.
public struct ServerInfoRequestMessage: WireMessage {
    public init() {}

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "ServerInfoRequest", unpack: adloader__v1__server_info_request__unpack,
            free: adloader__v1__server_info_request__free_unpacked
        ) { _ in ServerInfoRequestMessage() }
    }

    public func encode(into buffer: inout [UInt8]) {}
}

/// `ServerInfoResponse`: which server answered and what it runs.
public struct ServerInfoResponseMessage: WireMessage {
    /// ``BuildInfo/version`` of the server.
    public var version: String
    /// ``BuildInfo/build`` of the server.
    public var build: String
    /// The instance name (`listeners.instanceName`, default the bound `host:port`).
    public var instance: String
    /// Time since the daemon started.
    public var uptimeMilliseconds: UInt64
    /// Enabled features, sorted.
    public var features: [String]
    /// ``BuildInfo/protocolVersion``.
    public var protocolVersion: String

    public init(
        version: String, build: String, instance: String, uptimeMilliseconds: UInt64, features: [String],
        protocolVersion: String = BuildInfo.protocolVersion
    ) {
        self.version = version
        self.build = build
        self.instance = instance
        self.uptimeMilliseconds = uptimeMilliseconds
        self.features = features
        self.protocolVersion = protocolVersion
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(FrameError) {
        self = try unpacked(
            bytes, named: "ServerInfoResponse", unpack: adloader__v1__server_info_response__unpack,
            free: adloader__v1__server_info_response__free_unpacked
        ) { m in
            let p = m.pointee
            return ServerInfoResponseMessage(
                version: swiftString(p.version), build: swiftString(p.build), instance: swiftString(p.instance),
                uptimeMilliseconds: p.uptime_ms, features: swiftStrings(p.features, count: p.n_features),
                protocolVersion: swiftString(p.protocol))
        }
    }

    public func encode(into buffer: inout [UInt8]) {
        CArena.with { arena in
            var m = Adloader__V1__ServerInfoResponse()
            adloader__v1__server_info_response__init(&m)
            m.version = arena.cString(version)
            m.build = arena.cString(build)
            m.instance = arena.cString(instance)
            m.uptime_ms = uptimeMilliseconds
            m.n_features = features.count
            m.features = arena.cStringArray(features)
            m.protocol = arena.cString(protocolVersion)
            appendPacked(&m, to: &buffer)
        }
    }
}
