// ProtocolLoadBench: Borrow+Return load on adloaderd's framed protocol. Parsing and
// printing only; the generator lives in LoadGenerator.swift.
#if canImport(Glibc)
    import Glibc
#endif

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    let message =
        error.description.isEmpty ? Options.usage : "ProtocolLoadBench: \(error.description)\n\(Options.usage)"
    print(message)
    exit(error.description.isEmpty ? 0 : 2)
}
signal(SIGPIPE, SIG_IGN)
do {
    let outcome = try LoadGenerator(options: options).run()
    print(Report.render(options, outcome), terminator: "")
    if let problem = outcome.firstError {
        print("ProtocolLoadBench: FAILED: \(problem)")
        exit(1)
    }
    if outcome.counters.calls == 0 {
        print("ProtocolLoadBench: FAILED: no call completed")
        exit(1)
    }
} catch {
    print("ProtocolLoadBench: FAILED: \(error.description)")
    exit(1)
}
