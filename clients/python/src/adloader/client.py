"""``Client``: the adloaderd calls over gRPC with the affinity key, a token, deadlines and a
bounded retry of UNAVAILABLE.

    from adloader import Client

    with Client("127.0.0.1:7411") as client:
        with client.borrow("feed-native", slot="feed-42/position-7", wait_ms=1000) as lease:
            render(lease.ad)         # lease.ad is the NativeAd message
            lease.shown = True       # returned as shown when the block ends
        print(lease.return_outcome)  # "RETURN_OUTCOME_CONSUMED", ...

Several replicas without a proxy: ``Client(["10.0.0.1:7411", "10.0.0.2:7411"], affinity="feed-42")``
sends every call for a key to the replica nginx's ``hash $http_x_adloader_affinity consistent``
would choose (``ConsistentHashRing``), the Return to the replica that lent the lease; a Return
(plain or invalidating) answered ``NOT_FOUND`` ``... was lent by replica R`` is sent once more
to the endpoint of the list that lent it (``replica_index``).
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import grpc

from adloader.ring import ConsistentHashRing
from adloader.v1 import adloader_pb2 as pb
from adloader.v1 import service_pb2_grpc

AFFINITY_HEADER = "x-adloader-affinity"


def replica_index(name: str) -> int:
    """The replica index a daemon named ``name`` (its instance name; by default its bound
    ``host:port``) puts in the top 12 bits of its lease ids: 1 + FNV-1a-32 of the UTF-8 bytes
    mod 4095 (PROTOCOL.md 12.1), so ``lease_id >> 52`` names the lender."""
    h = 0x811C9DC5
    for byte in name.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return 1 + h % 4095


class NoAdYet(Exception):
    """The pool had no ad (and got none within ``wait_ms``); a top-up has started."""


@dataclass(frozen=True)
class Retry:
    """Retry of calls that end UNAVAILABLE (a call refused that way was not processed: a
    draining replica, a connection reset, a proxy's 502). ``attempts`` counts the first call;
    the pause before attempt *n* is ``initial_backoff`` × ``multiplier``^(n-2), at most
    ``max_backoff``, with ±20 % jitter. ``sleep`` is injectable (tests)."""

    attempts: int = 3
    initial_backoff: float = 0.01
    max_backoff: float = 0.1
    multiplier: float = 2.0
    sleep: Callable[[float], None] = time.sleep

    def pause(self, attempt: int) -> float:
        base = min(self.max_backoff, self.initial_backoff * self.multiplier ** max(0, attempt - 2))
        return base * random.uniform(0.8, 1.2)


@dataclass
class Lease:
    """A lent ad. Inside ``with client.borrow(...) as lease`` set ``shown`` once the ad was on
    screen; the lease is returned when the block ends (unshown when it raised)."""

    lease_id: int
    slot_key: str
    expires_at_unix_ms: int
    ad: pb.NativeAd
    reused: bool
    endpoint: str
    affinity: str = ""
    shown: bool = False
    return_outcome: Optional[str] = field(default=None)

    @classmethod
    def from_message(cls, lease: pb.Lease, reused: bool, endpoint: str, affinity: str = "") -> "Lease":
        return cls(lease.lease_id, lease.slot_key, lease.expires_at_unix_ms, lease.ad, reused, endpoint, affinity)


class _BorrowContext:
    def __init__(self, client: "Client", request: pb.BorrowRequest, affinity: Optional[str], timeout: Optional[float]):
        self._client = client
        self._request = request
        self._affinity = affinity
        self._timeout = timeout
        self._lease: Optional[Lease] = None

    def __enter__(self) -> Lease:
        lease = self._client.borrow_lease(self._request.ad_unit_id, loader=self._request.loader,
                                          slot=self._request.slot_key, wait_ms=self._request.wait_ms,
                                          affinity=self._affinity, timeout=self._timeout)
        if lease is None:
            raise NoAdYet(f"no ad yet for {self._request.ad_unit_id!r} (the pool is empty; a top-up has started)")
        self._lease = lease
        return lease

    def __exit__(self, kind, value, traceback) -> None:
        lease = self._lease
        if lease is None or lease.return_outcome is not None:
            return
        try:
            lease.return_outcome = self._client.return_lease(lease, shown=lease.shown and kind is None,
                                                             affinity=self._affinity, timeout=self._timeout)
        except grpc.RpcError:
            # The block's own error wins; the daemon reclaims the lease at its timeout.
            if kind is None:
                raise


class Client:
    """The adloaderd service ``adloader.v1.NativeAdLoader`` over gRPC.

    ``endpoints``: one ``host:port`` (a daemon or a proxy such as nginx), or a list of replicas
    named as on nginx's ``server`` lines (the ring picks one per affinity key). ``affinity``:
    the default affinity key (the feed or user id); calls without one send the ad unit.
    ``token``: sent as ``authorization: Bearer``. ``timeout``: seconds per call (a borrow's
    ``wait_ms`` is added). ``retry``: see ``Retry`` (``Retry(attempts=1)`` turns it off).
    ``replicas``: the fleet's replica endpoints (named as their instance names) when
    ``endpoints`` is a proxy: where a Return that the proxy sent to the wrong replica is sent
    again (the lender, found by ``replica_index``).
    """

    def __init__(self, endpoints: Union[str, Sequence[str]], *, affinity: Optional[str] = None,
                 token: Optional[str] = None, timeout: float = 2.0, retry: Retry = Retry(),
                 weights: Sequence[int] = (), replicas: Sequence[str] = ()) -> None:
        self.endpoints: List[str] = [endpoints] if isinstance(endpoints, str) else list(endpoints)
        self.replicas: List[str] = list(replicas)
        if not self.endpoints:
            raise ValueError("no endpoint")
        self.ring = ConsistentHashRing(self.endpoints, weights)
        self.affinity = affinity
        self.token = token
        self.timeout = timeout
        self.retry = retry
        self._channels: Dict[str, Tuple[grpc.Channel, service_pb2_grpc.NativeAdLoaderStub]] = {}
        self.last_instance: str = ""

    # -- plumbing ----------------------------------------------------------------------------

    def endpoint_for(self, key: str) -> str:
        """The endpoint that owns ``key`` (the only one when there is one)."""
        index = self.ring.server(key) if len(self.endpoints) > 1 else 0
        return self.endpoints[index or 0]

    def _stub(self, endpoint: str) -> service_pb2_grpc.NativeAdLoaderStub:
        if endpoint not in self._channels:
            channel = grpc.insecure_channel(endpoint)
            self._channels[endpoint] = (channel, service_pb2_grpc.NativeAdLoaderStub(channel))
        return self._channels[endpoint][1]

    def _metadata(self, key: str) -> List[Tuple[str, str]]:
        metadata = [(AFFINITY_HEADER, key)]
        if self.token:
            metadata.append(("authorization", f"Bearer {self.token}"))
        return metadata

    def _call(self, method: str, request, key: str, timeout: Optional[float], endpoint: Optional[str] = None):
        endpoint = endpoint or self.endpoint_for(key)
        attempt = 1
        while True:
            try:
                answer, call = getattr(self._stub(endpoint), method).with_call(
                    request, timeout=timeout if timeout is not None else self.timeout, metadata=self._metadata(key))
                for name, value in call.initial_metadata() or ():
                    if name == "x-adloader-instance":
                        self.last_instance = value
                return answer
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or attempt >= self.retry.attempts:
                    raise
                attempt += 1
                self.retry.sleep(self.retry.pause(attempt))

    # -- calls -------------------------------------------------------------------------------

    def borrow(self, ad_unit_id: str, *, loader: str = "", slot: str = "", wait_ms: int = 0,
               affinity: Optional[str] = None, timeout: Optional[float] = None) -> _BorrowContext:
        """``with client.borrow(...) as lease``: lends an ad (``NoAdYet`` when there is none)
        and returns the lease when the block ends, as shown if ``lease.shown`` was set and
        the block did not raise."""
        return _BorrowContext(self, pb.BorrowRequest(ad_unit_id=ad_unit_id, loader=loader, slot_key=slot,
                                                     wait_ms=wait_ms), affinity, timeout)

    def borrow_lease(self, ad_unit_id: str, *, loader: str = "", slot: str = "", wait_ms: int = 0,
                     affinity: Optional[str] = None, timeout: Optional[float] = None) -> Optional[Lease]:
        """One Borrow: the lease, or None for NO_AD_YET. Return it with ``return_lease``."""
        key = affinity or self.affinity or ad_unit_id
        endpoint = self.endpoint_for(key)
        deadline = (timeout if timeout is not None else self.timeout) + wait_ms / 1000
        answer = self._call("Borrow", pb.BorrowRequest(ad_unit_id=ad_unit_id, loader=loader, slot_key=slot,
                                                       wait_ms=wait_ms), key, deadline, endpoint)
        if answer.outcome not in (pb.BORROW_OUTCOME_LEASED, pb.BORROW_OUTCOME_REUSED):
            return None
        return Lease.from_message(answer.lease, answer.outcome == pb.BORROW_OUTCOME_REUSED, endpoint, key)

    def return_lease(self, lease: Union[Lease, int], *, shown: bool = False, invalidate: Optional[str] = None,
                     affinity: Optional[str] = None, timeout: Optional[float] = None) -> str:
        """Ends a lease (to the replica that lent it, for a ``Lease``); the outcome's name,
        e.g. ``RETURN_OUTCOME_BACK_IN_POOL``. ``invalidate``: the reason, to drop the ad and
        block its creative."""
        request = pb.ReturnRequest(lease_id=lease.lease_id if isinstance(lease, Lease) else lease, shown=shown,
                                   invalidate=invalidate is not None, invalidate_reason=invalidate or "")
        if isinstance(lease, Lease):
            key = affinity or lease.affinity or self.affinity or lease.ad.ad_unit_id
            endpoint = lease.endpoint
        else:
            key = affinity or self.affinity or ""
            endpoint = self.endpoint_for(key)
        try:
            answer = self._call("Return", request, key, timeout, endpoint)
        except grpc.RpcError as error:
            # Lent by another replica of the fleet (PROTOCOL.md 12.1): once more, on the lender.
            lender = self.lender_endpoint(error) if error.code() == grpc.StatusCode.NOT_FOUND else None
            if lender is None or lender == endpoint:
                raise
            answer = self._call("Return", request, key, timeout, lender)
        return pb.ReturnOutcome.Name(answer.outcome)

    def lender_endpoint(self, error: grpc.RpcError) -> Optional[str]:
        """The endpoint of this client's lists (``endpoints``, then ``replicas``) that lent the
        lease a NOT_FOUND ``... was lent by replica R, not this one (replica S)`` names (the one
        whose ``replica_index`` is R); None when the answer names no lender or no endpoint
        derives R."""
        match = re.search(r"was lent by replica (\d+)", error.details() or "")
        if match is None:
            return None
        wanted = int(match.group(1))
        return next((e for e in self.endpoints + self.replicas if replica_index(e) == wanted), None)

    def prefetch(self, ad_unit_id: str, *, loader: str = "", affinity: Optional[str] = None,
                 timeout: Optional[float] = None) -> pb.PrefetchResponse:
        key = affinity or self.affinity or ad_unit_id
        return self._call("Prefetch", pb.PrefetchRequest(ad_unit_id=ad_unit_id, loader=loader), key, timeout)

    def stats(self, *, loader: str = "", ad_unit_id: str = "", affinity: Optional[str] = None,
              timeout: Optional[float] = None) -> pb.StatsResponse:
        key = affinity or self.affinity or ad_unit_id
        return self._call("Stats", pb.StatsRequest(loader=loader, ad_unit_id=ad_unit_id), key, timeout)

    def set_loader_enabled(self, loader: str, enabled: bool, *, timeout: Optional[float] = None) -> bool:
        """Disables or enables a loader on the replica the client's affinity key picks; whether it changed."""
        key = self.affinity or loader
        return self._call("SetLoaderEnabled", pb.SetLoaderEnabledRequest(loader=loader, enabled=enabled), key,
                          timeout).changed

    def watch(self, *, loader: str = "", ad_unit_id: str = "", timeout: Optional[float] = None) -> Iterator[pb.Event]:
        """The pool events as they happen (until ``timeout``, or the iterator is closed)."""
        key = self.affinity or ad_unit_id
        return self._stub(self.endpoint_for(key)).Watch(pb.WatchRequest(loader=loader, ad_unit_id=ad_unit_id),
                                                        timeout=timeout, metadata=self._metadata(key))

    def close(self) -> None:
        for channel, _ in self._channels.values():
            channel.close()
        self._channels.clear()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
