import Foundation
import Testing

/// Fails when Sources/CAdLoaderProto is not what `make proto` (dev/generate-proto.sh) makes of
/// Proto/: the protoc-c code and the descriptor set server reflection serves.
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

        // The script itself, into a scratch target folder.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.currentDirectoryURL = Self.packageRoot
        process.arguments = ["dev/generate-proto.sh", tmp.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "dev/generate-proto.sh failed: \(errorText)")

        let target = Self.packageRoot.appendingPathComponent("Sources/CAdLoaderProto")
        let files = [
            "adloader.pb-c.c", "frame.pb-c.c", "include/adloader/v1/adloader.pb-c.h",
            "include/adloader/v1/frame.pb-c.h",
            "descriptor_set.c",
        ]
        for file in files {
            let fresh = try Data(contentsOf: tmp.appendingPathComponent(file))
            let current = try Data(contentsOf: target.appendingPathComponent(file))
            #expect(fresh == current, "Sources/CAdLoaderProto/\(file) is stale: run `make proto`")
        }
    }
}
