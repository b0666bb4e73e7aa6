internal import CAdLoaderProto

/// gRPC server reflection (`grpc.reflection.v1` and `grpc.reflection.v1alpha`, the same
/// messages): lists the services and serves the FileDescriptorProtos of Proto/ that
/// `make proto` compiled into the binary, so tools such as grpcurl call methods without the
/// .proto files.
///
/// Answers are computed per request message; the stream stays open for the next one.
public struct ReflectionService: Sendable {
    /// The services served on the gRPC transport, by full name.
    public let serviceNames: [String]
    /// Serialized FileDescriptorProto by file name.
    private let files: [String: [UInt8]]
    /// Each file's direct imports.
    private let dependencies: [String: [String]]
    /// Fully-qualified symbol (package.Message, package.Service, package.Service.Method,
    /// nested types and enums) → file name.
    private let symbols: [String: String]

    /// Reads the descriptor set generated into CAdLoaderProto.
    public init() {
        let set = Array(
            UnsafeBufferPointer(start: adloader_descriptor_set_data(), count: adloader_descriptor_set_size()))
        self.init(descriptorSet: set)
    }

    /// Reads a serialized FileDescriptorSet; malformed parts are skipped.
    init(descriptorSet: [UInt8]) {
        var files: [String: [UInt8]] = [:]
        var dependencies: [String: [String]] = [:]
        var symbols: [String: String] = [:]
        var services: [String] = []
        var set = ProtoReader(descriptorSet)
        while let field = try? set.next() {
            guard field.number == 1 else { continue }
            guard let file = try? Self.index(file: field.bytes, symbols: &symbols, services: &services) else {
                continue
            }
            files[file.name] = Array(field.bytes)
            dependencies[file.name] = file.dependencies
        }
        self.files = files
        self.dependencies = dependencies
        self.symbols = symbols
        self.serviceNames = services
    }

    /// A FileDescriptorProto's name and imports; records its symbols.
    private static func index(
        file: ArraySlice<UInt8>, symbols: inout [String: String], services: inout [String]
    ) throws(ProtoReader.Malformed) -> (name: String, dependencies: [String]) {
        var name = ""
        var package = ""
        var imports: [String] = []
        var messages: [ArraySlice<UInt8>] = []
        var enums: [ArraySlice<UInt8>] = []
        var serviceMessages: [ArraySlice<UInt8>] = []
        var reader = ProtoReader(file)
        while let field = try reader.next() {
            switch field.number {
            case 1: name = field.string
            case 2: package = field.string
            case 3: imports.append(field.string)
            case 4: messages.append(field.bytes)
            case 5: enums.append(field.bytes)
            case 6: serviceMessages.append(field.bytes)
            default: break
            }
        }
        let prefix = package.isEmpty ? "" : package + "."
        for message in messages { try indexMessage(message, prefix: prefix, file: name, symbols: &symbols) }
        for value in enums { symbols[prefix + (try nameField(value))] = name }
        for service in serviceMessages {
            var reader = ProtoReader(service)
            var serviceName = ""
            var methods: [String] = []
            while let field = try reader.next() {
                if field.number == 1 { serviceName = field.string }
                if field.number == 2 { methods.append(try nameField(field.bytes)) }
            }
            let full = prefix + serviceName
            symbols[full] = name
            services.append(full)
            for method in methods { symbols[full + "." + method] = name }
        }
        return (name, imports)
    }

    private static func indexMessage(
        _ message: ArraySlice<UInt8>, prefix: String, file: String, symbols: inout [String: String]
    ) throws(ProtoReader.Malformed) {
        var reader = ProtoReader(message)
        var name = ""
        var nested: [ArraySlice<UInt8>] = []
        var enums: [ArraySlice<UInt8>] = []
        while let field = try reader.next() {
            switch field.number {
            case 1: name = field.string
            case 3: nested.append(field.bytes)
            case 4: enums.append(field.bytes)
            default: break
            }
        }
        let full = prefix + name
        symbols[full] = file
        for inner in nested { try indexMessage(inner, prefix: full + ".", file: file, symbols: &symbols) }
        for value in enums { symbols[full + "." + (try nameField(value))] = file }
    }

    private static func nameField(_ bytes: ArraySlice<UInt8>) throws(ProtoReader.Malformed) -> String {
        var reader = ProtoReader(bytes)
        while let field = try reader.next() {
            if field.number == 1 { return field.string }
        }
        return ""
    }

    /// The file names known, for tests and logs.
    public var fileNames: [String] { files.keys.sorted() }

    /// Answers one ServerReflectionRequest.
    /// - Returns: the encoded ServerReflectionResponse (errors travel inside it, as
    ///   ErrorResponse), or nil when the request does not decode.
    public func answer(_ request: ArraySlice<UInt8>) -> [UInt8]? {
        var reader = ProtoReader(request)
        var host = ""
        var question: ProtoReader.Field?
        do throws(ProtoReader.Malformed) {
            while let field = try reader.next() {
                if field.number == 1 { host = field.string } else if (3...7).contains(field.number) { question = field }
            }
        } catch {
            return nil
        }
        var response = ProtoEncoder()
        response.stringField(1, host)
        response.bytesField(2, request)
        guard let question else {
            appendError(&response, code: 3, message: "no message_request set")
            return response.bytes
        }
        switch question.number {
        case 3:
            let name = question.string
            if files[name] != nil {
                appendFiles(&response, startingAt: name)
            } else {
                appendError(&response, code: 5, message: "file not found: \(name)")
            }
        case 4:
            let symbol = question.string
            if let file = symbols[symbol] {
                appendFiles(&response, startingAt: file)
            } else {
                appendError(&response, code: 5, message: "symbol not found: \(symbol)")
            }
        case 5:
            // proto3 files declare no extensions.
            appendError(&response, code: 5, message: "no extensions are declared")
        case 6:
            let type = question.string
            if symbols[type] != nil {
                var numbers = ProtoEncoder()
                numbers.stringField(1, type)
                response.bytesField(5, numbers.bytes)
            } else {
                appendError(&response, code: 5, message: "type not found: \(type)")
            }
        default:
            var list = ProtoEncoder()
            for service in serviceNames {
                var entry = ProtoEncoder()
                entry.stringField(1, service)
                list.bytesField(1, entry.bytes)
            }
            response.bytesField(6, list.bytes)
        }
        return response.bytes
    }

    /// The file and every file it imports, transitively, the file first.
    private func appendFiles(_ response: inout ProtoEncoder, startingAt name: String) {
        var order: [String] = []
        var seen: Set<String> = []
        var queue = [name]
        while let next = queue.first {
            queue.removeFirst()
            guard files[next] != nil, seen.insert(next).inserted else { continue }
            order.append(next)
            queue.append(contentsOf: dependencies[next] ?? [])
        }
        var list = ProtoEncoder()
        for file in order { list.bytesField(1, files[file] ?? []) }
        response.bytesField(4, list.bytes)
    }

    private func appendError(_ response: inout ProtoEncoder, code: UInt64, message: String) {
        var error = ProtoEncoder()
        error.varintField(1, code)
        error.stringField(2, message)
        response.bytesField(7, error.bytes)
    }
}
