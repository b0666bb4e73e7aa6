#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
// The asynchronous API; adloaderd attaches it to its libuv loop itself (AdStores
// RedisConnection) instead of hiredis/adapters/libuv.h, whose handle is malloc'ed and freed by
// the adapter and carries no reply timeout (hiredis 0.14 has none of its own).
#include <hiredis/async.h>
#endif
