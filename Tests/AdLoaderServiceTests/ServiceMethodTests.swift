import AdLoaderCore
import AdLoaderLogging
import AdLoaderTestSupport
import AdLoaderWire
import AdSources
import Foundation
import Testing

@testable import AdLoaderService

/// The method list is the one table: it matches the proto's service, decodes each method's
/// request, and the calls added through it (ServerInfo) answer on no transport's code.
@Suite struct ServiceMethodTests {
    /// The `rpc` lines of Proto/adloader/v1/service.proto, in order.
    static func protoMethods() throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(
            contentsOf: root.appendingPathComponent("Proto/adloader/v1/service.proto"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("rpc "), let open = trimmed.firstIndex(of: "(") else { return nil }
            return String(trimmed[trimmed.index(trimmed.startIndex, offsetBy: 4)..<open])
        }
    }

    @Test func theListIsTheProtosServiceInOrder() throws {
        #expect(ServiceMethod.allCases.map(\.name) == (try Self.protoMethods()))
        #expect(ServiceMethod.allCases.map(\.fullName) == MethodName.all)
        #expect(ServiceMethod.allCases.map(\.rawValue) == Array(ServiceMethod.allCases.indices))
        for method in ServiceMethod.allCases {
            #expect(method.fullName == "/adloader.v1.NativeAdLoader/\(method.name)")
            #expect(ServiceMethod(fullName: method.fullName) == method)
            #expect(method.kind == (method.name == "Watch" ? .serverStreaming : .unary))
        }
        #expect(ServiceMethod(fullName: "/adloader.v1.NativeAdLoader/Nope") == nil)
    }

    @Test func everyMethodDecodesAnEmptyRequestToItself() throws {
        for method in ServiceMethod.allCases {
            let request = try ServiceRequest(
                method: method.fullName, message: UnsafeRawBufferPointer(start: nil, count: 0))
            #expect(request.method == method)
        }
    }

    @Test func garbageIsInvalidArgumentAndAnUnknownMethodUnimplemented() {
        let garbage: [UInt8] = [0xFF, 0xFF, 0xFF]
        for method in ServiceMethod.allCases where method != .reload && method != .serverInfo {
            #expect(throws: Status.self) {
                try garbage.withUnsafeBytes { try ServiceRequest(method: method.fullName, message: $0) }
            }
        }
        let unknown = garbage.withUnsafeBytes { bytes -> Status? in
            do throws(Status) {
                _ = try ServiceRequest(method: "/x.Y/Z", message: bytes)
                return nil
            } catch {
                return error
            }
        }
        #expect(unknown?.code == .unimplemented)
    }

    @Test func serverInfoAnswersVersionInstanceUptimeAndFeatures() throws {
        let clock = ManualClock()
        let loader = try NativeAdvertisementLoader(
            loaders: [LoaderConfiguration(name: "default")],
            sources: ["synthetic": try SyntheticSource(configuration: .init(), clock: clock, scheduler: clock)],
            clock: clock, scheduler: clock)
        let service = AdLoaderService(
            loader: loader, limits: ServerLimits(), clock: clock, scheduler: clock, logger: Logger(level: .error))
        service.responseMetadata = try CallMetadata([(CallMetadata.instanceKey, "replica-a")])
        service.features = ["grpc", "auth", "framed"]
        clock.advance(by: .milliseconds(1_500))
        let responder = RecordingResponder()
        let open = service.handle(
            .serverInfo(ServerInfoRequestMessage()), callID: 7, timeout: nil, responder: responder)
        #expect(open == nil)
        let expected = ServerInfoResponseMessage(
            version: BuildInfo.version, build: BuildInfo.build, instance: "replica-a", uptimeMilliseconds: 1_500,
            features: ["auth", "framed", "grpc"])
        #expect(responder.take() == [.other(7, AnyHashable(expected))])
        // The message survives its encoding.
        #expect(try ServerInfoResponseMessage(decoding: expected.encoded()) == expected)
        // While draining, UNAVAILABLE like every call.
        service.beginDrain()
        _ = service.handle(.serverInfo(ServerInfoRequestMessage()), callID: 8, timeout: nil, responder: responder)
        #expect(responder.lastStatus?.code == .unavailable)
    }
}
