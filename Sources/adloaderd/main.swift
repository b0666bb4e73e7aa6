// adloaderd: parse, configure, run. Everything else lives in AdLoaderDaemon (callbacks must
// not be written here: top-level code is main-actor isolated).
import AdLoaderDaemon

#if canImport(Glibc)
    import Glibc
#endif

// On Linux the Swift runtime reads the arguments from /proc/self/cmdline: without /proc (a bare
// chroot) it sees none, not even the program's name, and the daemon would start on its defaults
// with every flag ignored. Refuse instead.
if CommandLine.arguments.isEmpty {
    let message = "adloaderd: cannot read the command line (is /proc mounted?)\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(ServerMain.configurationErrorStatus)
}
exit(ServerMain.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ServerMain.processEnvironment()))
