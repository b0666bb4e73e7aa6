import Foundation
import PackagePlugin

/// Writes `GitCommit.swift` (`GitCommit.hash`: the package's commit, or "unknown") into the
/// AdLoaderBuild module before each build.
///
/// A prebuild command, so it runs on every build; the script rewrites the file only when the
/// commit changed, so a build at the same commit recompiles nothing. Outside a git checkout (a
/// source tarball), without git, or where git refuses the directory (another owner), the hash is
/// "unknown" and the build goes on.
@main
struct GitCommitPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "GitCommit")
        let script = #"""
            root="$1"; out="$2"; mkdir -p "$out" || exit 1
            hash=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || hash=""
            case "$hash" in *[!0-9a-f]*|"") hash=unknown ;; esac
            printf '// Generated before each build by Plugins/GitCommitPlugin; not committed.\n/// The commit the binary was built from (12 hex digits), or "unknown" outside git.\npackage enum GitCommit {\n    package static let hash = "%s"\n}\n' "$hash" > "$out/GitCommit.swift.new" || exit 1
            if cmp -s "$out/GitCommit.swift.new" "$out/GitCommit.swift"; then rm -f "$out/GitCommit.swift.new"; else mv "$out/GitCommit.swift.new" "$out/GitCommit.swift"; fi
            """#
        return [
            .prebuildCommand(
                displayName: "GitCommit: the commit of \(context.package.directoryURL.path)",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", script, "sh", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}
