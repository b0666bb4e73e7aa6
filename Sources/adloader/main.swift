// adloader: parse the command line and dispatch; the work is in Commands.swift.
import Foundation

let code = await CommandRunner.main(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
exit(code)
