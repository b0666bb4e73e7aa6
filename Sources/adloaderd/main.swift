// adloaderd: parse, configure, run. Everything else lives in AdLoaderServer (callbacks must
// not be written here: top-level code is main-actor isolated).
import AdLoaderServer

#if canImport(Glibc)
import Glibc
#endif

exit(ServerMain.run(arguments: Array(CommandLine.arguments.dropFirst()), environment: ServerMain.processEnvironment()))
