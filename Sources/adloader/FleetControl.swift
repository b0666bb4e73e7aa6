import AdLoaderClient
import AdLoaderCore
import AdLoaderWire
import Foundation

/// Control that reaches every replica: with `--endpoints`, `disable`, `enable` and `reload`
/// go to each daemon of the list (at the same time, one connection each) and print each
/// one's answer, in the list's order. Exit 0 when every replica answered OK; 3 when any could
/// not be reached; else 1 (some replica answered with an error status).
enum FleetControl {
    /// One replica's answer.
    struct Answer: Sendable {
        var endpoint: Endpoint
        var outcome: Outcome
    }

    enum Outcome: Sendable {
        case switched(changed: Bool)
        case reloaded(ReconfigureResult)
        case status(Status)
        case unreachable(String)
    }

    static func appliesTo(_ command: Invocation.Command) -> Bool {
        switch command {
        case .setEnabled, .reload: true
        default: false
        }
    }

    static func run(_ invocation: Invocation, endpoints: EndpointSet) async -> Int32 {
        let timeout = invocation.timeoutMilliseconds.map { Duration.milliseconds(Int64($0)) }
        let command = invocation.command
        let token = invocation.token
        let tls = invocation.tls
        let answers = await withTaskGroup(of: (Int, Answer).self) { group in
            for (index, endpoint) in endpoints.endpoints.enumerated() {
                group.addTask { (index, await ask(endpoint, command, token: token, tls: tls, timeout: timeout)) }
            }
            var collected: [(Int, Answer)] = []
            for await answer in group { collected.append(answer) }
            return collected.sorted { $0.0 < $1.0 }.map(\.1)
        }
        if invocation.json {
            print(json(answers, command: command))
        } else {
            for answer in answers { print(text(answer, command: command)) }
        }
        if answers.contains(where: { if case .unreachable = $0.outcome { true } else { false } }) {
            return CommandRunner.exitConnection
        }
        if answers.contains(where: { if case .status = $0.outcome { true } else { false } }) {
            return CommandRunner.exitStatus
        }
        return CommandRunner.exitOK
    }

    static func ask(
        _ endpoint: Endpoint, _ command: Invocation.Command, token: String?, tls: ClientTLS?, timeout: Duration?
    ) async
        -> Answer
    {
        let client: AdLoaderClient
        do {
            client = try AdLoaderClient.connect(to: endpoint, token: token, tls: tls)
        } catch {
            return Answer(endpoint: endpoint, outcome: .unreachable(CommandRunner.describe(error)))
        }
        defer { client.close() }
        do {
            switch command {
            case .setEnabled(let loader, let enabled):
                let changed = try await client.setLoaderEnabled(loader, enabled: enabled, timeout: timeout)
                return Answer(endpoint: endpoint, outcome: .switched(changed: changed))
            case .reload:
                return Answer(endpoint: endpoint, outcome: .reloaded(try await client.reload(timeout: timeout)))
            default:
                return Answer(endpoint: endpoint, outcome: .unreachable("not a fleet command"))
            }
        } catch let status as Status {
            if status.code == .unavailable && status.message.hasPrefix("connection") {
                return Answer(endpoint: endpoint, outcome: .unreachable(status.message))
            }
            return Answer(endpoint: endpoint, outcome: .status(status))
        } catch {
            return Answer(endpoint: endpoint, outcome: .unreachable(CommandRunner.describe(error)))
        }
    }

    static func text(_ answer: Answer, command: Invocation.Command) -> String {
        let head = "\(answer.endpoint): "
        switch answer.outcome {
        case .switched(let changed):
            guard case .setEnabled(let loader, let enabled) = command else { return head + "?" }
            let state = enabled ? "enabled" : "disabled"
            return head
                + (changed ? "loader \(loader) \(state)" : "loader \(loader) was already \(state): nothing changed")
        case .reloaded(let result):
            var parts: [String] = []
            for (label, names) in [
                ("added", result.added), ("removed", result.removed),
                ("changed, pools kept", result.changedKeepingPools),
                ("changed, pools dropped", result.changedDroppingPools),
            ] where !names.isEmpty {
                parts.append("\(label): \(names.joined(separator: ", "))")
            }
            return head
                + (result.changedAnything
                    ? "configuration reloaded; " + parts.joined(separator: "; ")
                    : "configuration reloaded: no loader changed")
        case .status(let status): return head + "FAILED \(status)"
        case .unreachable(let message): return head + "UNREACHABLE \(message)"
        }
    }

    static func json(_ answers: [Answer], command: Invocation.Command) -> String {
        let objects: [[String: Any]] = answers.map { answer in
            var object: [String: Any] = ["endpoint": answer.endpoint.description]
            switch answer.outcome {
            case .switched(let changed):
                object["ok"] = true
                object["changed"] = changed
            case .reloaded(let result):
                object["ok"] = true
                object["added"] = result.added
                object["removed"] = result.removed
                object["changedKeepingPools"] = result.changedKeepingPools
                object["changedDroppingPools"] = result.changedDroppingPools
                object["unchanged"] = result.unchanged
            case .status(let status):
                object["ok"] = false
                object["code"] = status.code.description
                object["message"] = status.message
            case .unreachable(let message):
                object["ok"] = false
                object["code"] = "UNREACHABLE"
                object["message"] = message
            }
            return object
        }
        guard let data = try? JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])
        else {
            return "[]"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
