// adloaderd: parse, configure, run. Everything else lives in AdLoaderDaemon (callbacks must
// not be written here: top-level code is main-actor isolated).
import AdLoaderDaemon

#if canImport(Glibc)
import Glibc
#endif

exit(ServerMain.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ServerMain.processEnvironment()))
