import AdLoaderArguments
import Testing

@Suite struct ArgumentScannerTests {
    /// Scans `arguments`, taking a value for the options in `valued`.
    private func scan(_ arguments: [String], valued: Set<String> = []) throws(ArgumentScanner.Failure) -> [String] {
        var scanner = ArgumentScanner(arguments)
        var seen: [String] = []
        while let argument = scanner.next() {
            switch argument {
            case .option(let name) where valued.contains(name): seen.append("\(name)=\(try scanner.value())")
            case .option(let name): seen.append(name)
            case .positional(let text): seen.append("<\(text)>")
            }
        }
        return seen
    }

    @Test func readsOptionsWithSeparateOrInlineValuesAndPositionals() throws {
        let seen = try scan(
            ["borrow", "--slot", "a/b", "--wait=2000", "--json", "-h", "-", "x=y", "--label=a=b", "--empty="],
            valued: ["--slot", "--wait", "--label", "--empty"])
        #expect(
            seen == [
                "<borrow>", "--slot=a/b", "--wait=2000", "--json", "-h", "<->", "<x=y>", "--label=a=b", "--empty=",
            ])
    }

    @Test func aValueIsTheNextArgumentWhateverItLooksLike() throws {
        #expect(
            try scan(["--port", "--host", "--delta", "-1"], valued: ["--port", "--delta"]) == [
                "--port=--host", "--delta=-1",
            ])
    }

    @Test func aMissingValueNamesTheOption() {
        #expect(throws: ArgumentScanner.Failure(option: "--port", message: "needs a value")) {
            try scan(["--quiet", "--port"], valued: ["--port"])
        }
        #expect(
            ArgumentScanner.Failure(option: "--port", message: "needs a value").description == "--port: needs a value")
    }

    @Test func anInlineValueOfAnOptionTakingNoneIsDropped() throws {
        #expect(try scan(["--json=1", "x"]) == ["--json", "<x>"])
    }

    @Test func singleDashOptionsAreNotSplitAtEquals() throws {
        #expect(try scan(["-x=1"]) == ["-x=1"])
    }

    @Test func numbersAreParsedAndRangeChecked() throws {
        var scanner = ArgumentScanner(["--connections", "32", "--rate=0.5", "--depth", "0", "--ops", "many"])
        #expect(scanner.next() == .option("--connections"))
        #expect(try scanner.value(in: 1...1024) == 32)
        #expect(scanner.next() == .option("--rate"))
        #expect(try scanner.value(as: Double.self) == 0.5)
        #expect(scanner.next() == .option("--depth"))
        #expect(throws: ArgumentScanner.Failure(option: "--depth", message: "must be a number in 1...128, got \"0\"")) {
            try scanner.value(in: 1...128)
        }
        #expect(scanner.next() == .option("--ops"))
        #expect(throws: ArgumentScanner.Failure(option: "--ops", message: "not a number: \"many\"")) {
            try scanner.value(as: Int.self)
        }
        #expect(scanner.next() == nil)
    }
}
