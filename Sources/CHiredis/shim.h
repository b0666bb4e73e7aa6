#ifndef CHIREDIS_SHIM_H
#define CHIREDIS_SHIM_H
// hiredis as the RESP reply reader (redisReaderCreate/Feed/GetReply, read.h through hiredis.h;
// and the blocking API, the latency benchmark's peer). adloaderd moves the bytes itself on its
// libuv loop, TLS included (AdStores RedisConnection): hiredis 0.14's async API has neither TLS
// nor a reply timeout, and hiredis/adapters/libuv.h mallocs and frees its handle itself.
#include <hiredis/hiredis.h>
#endif
