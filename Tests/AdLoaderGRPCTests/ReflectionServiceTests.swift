import Testing

@testable import AdLoaderGRPC

@Suite struct ReflectionServiceTests {
    let reflection = ReflectionService()

    private func request(_ number: UInt64, _ value: String) -> [UInt8] {
        var encoder = ProtoEncoder()
        encoder.stringField(1, "localhost")
        encoder.bytesField(number, Array(value.utf8))
        return encoder.bytes
    }

    /// The oneof field of a response, and its bytes.
    private func answer(_ bytes: [UInt8]?) throws -> (number: UInt64, bytes: [UInt8]) {
        var reader = ProtoReader(try #require(bytes))
        var found: (UInt64, [UInt8])?
        while let field = try reader.next() {
            if (4...7).contains(field.number) { found = (field.number, Array(field.bytes)) }
        }
        return try #require(found)
    }

    private func fileNames(_ response: [UInt8]) throws -> [String] {
        var names: [String] = []
        var list = ProtoReader(response)
        while let file = try list.next() {
            var fields = ProtoReader(file.bytes)
            while let field = try fields.next() {
                if field.number == 1 { names.append(field.string) }
            }
        }
        return names
    }

    @Test func theDescriptorSetOfProtoIsCompiledIn() {
        #expect(
            reflection.fileNames == [
                "adloader/v1/adloader.proto", "adloader/v1/service.proto", "grpc/health/v1/health.proto",
                "grpc/reflection/v1/reflection.proto", "grpc/reflection/v1alpha/reflection.proto",
            ])
        #expect(
            reflection.serviceNames == [
                "adloader.v1.NativeAdLoader", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                "grpc.reflection.v1alpha.ServerReflection",
            ])
    }

    @Test func listServices() throws {
        let (number, bytes) = try answer(reflection.answer(request(7, "*")[...]))
        #expect(number == 6)
        var services: [String] = []
        var list = ProtoReader(bytes)
        while let entry = try list.next() {
            var fields = ProtoReader(entry.bytes)
            while let field = try fields.next() {
                if field.number == 1 { services.append(field.string) }
            }
        }
        #expect(services == reflection.serviceNames)
    }

    @Test(arguments: [
        "adloader.v1.NativeAdLoader", "adloader.v1.NativeAdLoader.Borrow", "adloader.v1.BorrowRequest",
        "adloader.v1.BorrowOutcome",
    ])
    func aSymbolGivesItsFileWithItsImports(_ symbol: String) throws {
        let (number, bytes) = try answer(reflection.answer(request(4, symbol)[...]))
        #expect(number == 4)
        let files = try fileNames(bytes)
        #expect(files.contains("adloader/v1/adloader.proto"))
        #expect(Set(files).count == files.count)
    }

    @Test func aFileByNameComesFirst() throws {
        let (number, bytes) = try answer(reflection.answer(request(3, "adloader/v1/service.proto")[...]))
        #expect(number == 4)
        #expect(try fileNames(bytes) == ["adloader/v1/service.proto", "adloader/v1/adloader.proto"])
    }

    @Test(arguments: [(UInt64(4), "adloader.v1.Nope"), (3, "nope.proto"), (3, ""), (6, "x.Y")])
    func unknownNamesAreNotFoundInsideTheResponse(_ number: UInt64, _ value: String) throws {
        let (field, bytes) = try answer(reflection.answer(request(number, value)[...]))
        #expect(field == 7)
        var reader = ProtoReader(bytes)
        #expect(try reader.next()?.varint == 5)
    }

    @Test(arguments: [[0xff], [0x0a, 0x05, 0x61], [0x0b], Array(repeating: 0xff, count: 11)] as [[UInt8]])
    func garbageDoesNotDecode(_ bytes: [UInt8]) {
        #expect(reflection.answer(bytes[...]) == nil)
    }

    @Test func healthStatusFollowsTheDrain() {
        let health = HealthService()
        #expect(health.status(of: "", draining: false) == .serving)
        #expect(health.status(of: "adloader.v1.NativeAdLoader", draining: true) == .notServing)
        #expect(health.status(of: "other", draining: false) == .serviceUnknown)
        #expect(HealthService.response(.notServing) == [0x08, 0x02])
        #expect(HealthService.serviceName(decoding: [0x0a, 0x01, 0x61]) == "a")
        #expect(HealthService.serviceName(decoding: [0x0a, 0x05]) == nil)
    }
}
