// Command borrow-return borrows one ad from adloaderd over gRPC and returns it: the Go
// quickstart of the README ("From Go"), built and run against the real daemon by `make test`
// (Tests/python/test_clients.py).
//
// Build it with Debian's Go and gRPC packages, no module downloads (the README has the lines):
//
//	protoc -I Proto --go_out=$W/src --go-grpc_out=$W/src Proto/adloader/v1/*.proto
//	GO111MODULE=off GOPATH=$W:/usr/share/gocode go build -o $W/bin/borrow-return ./clients/go/borrow-return
//
// Usage: borrow-return [-endpoint 127.0.0.1:7411] [-ad-unit feed-native] [-loader default]
// [-slot feed-42/position-7] [-affinity feed-42] [-wait-ms 1000] [-token TOKEN] [-shown]
// It prints one JSON line (the lease, the ad's headline, the Return outcome) and exits 0, or
// prints the error and exits 1.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	adloaderv1 "adloaderd/clients/go/adloader/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:7411", "adloaderd's gRPC address (host:port)")
	adUnit := flag.String("ad-unit", "feed-native", "the ad unit to borrow from")
	loader := flag.String("loader", "", "the loader (empty: \"default\")")
	slot := flag.String("slot", "", "the feed cell, e.g. feed-42/position-7 (empty: none)")
	affinity := flag.String("affinity", "", "x-adloader-affinity metadata for a fleet behind nginx (empty: the ad unit)")
	waitMs := flag.Uint("wait-ms", 1000, "how long the daemon may park the borrow when the pool is empty")
	token := flag.String("token", os.Getenv("ADLOADER_TOKEN"), "bearer token when the daemon has auth.tokens")
	shown := flag.Bool("shown", false, "return the lease as shown")
	flag.Parse()
	if err := run(*endpoint, *adUnit, *loader, *slot, *affinity, uint32(*waitMs), *token, *shown); err != nil {
		fmt.Fprintln(os.Stderr, "borrow-return:", err)
		os.Exit(1)
	}
}

func run(endpoint, adUnit, loader, slot, affinity string, waitMs uint32, token string, shown bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.DialContext(ctx, endpoint, grpc.WithInsecure(), grpc.WithBlock())
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", endpoint, err)
	}
	defer conn.Close()
	client := adloaderv1.NewNativeAdLoaderClient(conn)

	// The affinity key goes on every call, the Return included: behind nginx it picks the
	// replica that lent the lease.
	if affinity == "" {
		affinity = adUnit
	}
	md := metadata.Pairs("x-adloader-affinity", affinity)
	if token != "" {
		md.Append("authorization", "Bearer "+token)
	}
	ctx = metadata.NewOutgoingContext(ctx, md)

	var header metadata.MD
	callCtx, callCancel := context.WithTimeout(ctx, time.Duration(waitMs)*time.Millisecond+2*time.Second)
	defer callCancel()
	borrowed, err := client.Borrow(callCtx, &adloaderv1.BorrowRequest{
		AdUnitId: adUnit, Loader: loader, SlotKey: slot, WaitMs: waitMs,
	}, grpc.Header(&header))
	if err != nil {
		return fmt.Errorf("Borrow: %w", err)
	}
	if borrowed.Outcome == adloaderv1.BorrowOutcome_BORROW_OUTCOME_NO_AD_YET {
		return fmt.Errorf("Borrow: no ad yet after %d ms (the pool is filling)", waitMs)
	}
	lease := borrowed.GetLease()
	returned, err := client.Return(ctx, &adloaderv1.ReturnRequest{LeaseId: lease.GetLeaseId(), Shown: shown})
	if err != nil {
		return fmt.Errorf("Return: %w", err)
	}
	instance := ""
	if values := header.Get("x-adloader-instance"); len(values) > 0 {
		instance = values[0]
	}
	line, _ := json.Marshal(map[string]interface{}{
		"borrowOutcome":   borrowed.Outcome.String(),
		"leaseId":         fmt.Sprint(lease.GetLeaseId()),
		"expiresAtUnixMs": fmt.Sprint(lease.GetExpiresAtUnixMs()),
		"adId":            lease.GetAd().GetId(),
		"headline":        lease.GetAd().GetHeadline(),
		"returnOutcome":   returned.Outcome.String(),
		"instance":        instance,
	})
	fmt.Println(string(line))
	return nil
}
