import Foundation
import Testing

/// Fails when Sources/CAdLoaderProto is not what protoc-c makes of Proto/ (run `make proto`).
@Suite struct GeneratedCodeTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(.timeLimit(.minutes(1)))
    func committedProtobufCOutputIsCurrent() throws {
        let protoc = "/usr/bin/protoc-c"
        try #require(FileManager.default.isExecutableFile(atPath: protoc), "protoc-c is not installed (make deps)")
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("adloader-proto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }

        // Exactly as dev/generate-proto.sh runs it.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: protoc)
        process.currentDirectoryURL = Self.packageRoot
        process.arguments = [
            "--c_out=\(tmp.path)", "-I", "Proto", "Proto/adloader/v1/adloader.proto", "Proto/adloader/v1/frame.proto",
        ]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "protoc-c failed: \(errorText)")

        let target = Self.packageRoot.appendingPathComponent("Sources/CAdLoaderProto")
        for name in ["adloader", "frame"] {
            let pairs = [
                ("adloader/v1/\(name).pb-c.c", "\(name).pb-c.c"), ("adloader/v1/\(name).pb-c.h", "include/adloader/v1/\(name).pb-c.h"),
            ]
            for (generated, committed) in pairs {
                let fresh = try Data(contentsOf: tmp.appendingPathComponent(generated))
                let current = try Data(contentsOf: target.appendingPathComponent(committed))
                #expect(fresh == current, "Sources/CAdLoaderProto/\(committed) is stale: run `make proto`")
            }
        }
    }
}
