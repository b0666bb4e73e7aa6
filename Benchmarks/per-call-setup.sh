# Sourced by callgrind-per-call.sh and allocations-per-call.sh: the daemon configuration both
# measure under and the gRPC Borrow they send, written into $WORK. The pool store is off: with
# it, each run restored the pool the run before left behind (adloaderd-pools.sqlite in the
# working directory), so the 100k and 200k runs started differently and the slope was noise.
cat > "$WORK/adloaderd.json" <<'JSON'
{ "listeners": { "host": "127.0.0.1", "port": 0 },
  "log": { "level": "warning" },
  "poolStore": { "type": "off" },
  "sources": { "synthetic": { "latency": "0ms", "fillRate": 1, "seed": 7 } },
  "loaders": { "default": { "numberOfAdvertisements": 5, "maximumRetainedAdvertisements": 4096,
                            "leaseTimeout": "60s" } } }
JSON
GRPC_HEADERS=(-H 'content-type: application/grpc' -H 'te: trailers')
BORROW_PATH=/adloader.v1.NativeAdLoader/Borrow
# BorrowRequest { ad_unit_id: "bench", slot_key: "cell-1" } with the 5-byte gRPC prefix.
printf '\x00\x00\x00\x00\x0f\x0a\x05bench\x1a\x06cell-1' > "$WORK/borrow.grpc"
PLAN_PATH=/adloader.v1.NativeAdLoader/Plan
# PlanRequest { feed_id: "f", ad_unit_id: "bench", first_visible: 0, last_visible: 7, ahead: 3 }
# with the 5-byte gRPC prefix: the default placement's positions 4 (on screen) and 9 (ahead).
printf '\x00\x00\x00\x00\x0e\x0a\x01f\x12\x05bench\x28\x07\x30\x03' > "$WORK/plan.grpc"
