from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Gdpr(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GDPR_UNSPECIFIED: _ClassVar[Gdpr]
    GDPR_APPLIES: _ClassVar[Gdpr]
    GDPR_DOES_NOT_APPLY: _ClassVar[Gdpr]

class AttStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ATT_STATUS_UNSPECIFIED: _ClassVar[AttStatus]
    ATT_STATUS_NOT_DETERMINED: _ClassVar[AttStatus]
    ATT_STATUS_RESTRICTED: _ClassVar[AttStatus]
    ATT_STATUS_DENIED: _ClassVar[AttStatus]
    ATT_STATUS_AUTHORIZED: _ClassVar[AttStatus]

class BorrowOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BORROW_OUTCOME_UNSPECIFIED: _ClassVar[BorrowOutcome]
    BORROW_OUTCOME_LEASED: _ClassVar[BorrowOutcome]
    BORROW_OUTCOME_REUSED: _ClassVar[BorrowOutcome]
    BORROW_OUTCOME_NO_AD_YET: _ClassVar[BorrowOutcome]

class ReturnOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RETURN_OUTCOME_UNSPECIFIED: _ClassVar[ReturnOutcome]
    RETURN_OUTCOME_BACK_IN_POOL: _ClassVar[ReturnOutcome]
    RETURN_OUTCOME_CONSUMED: _ClassVar[ReturnOutcome]
    RETURN_OUTCOME_EXPIRED: _ClassVar[ReturnOutcome]
    RETURN_OUTCOME_REMOVED: _ClassVar[ReturnOutcome]
    RETURN_OUTCOME_INVALIDATED: _ClassVar[ReturnOutcome]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    EVENT_KIND_RECEIVED: _ClassVar[EventKind]
    EVENT_KIND_LOAD_FINISHED: _ClassVar[EventKind]
    EVENT_KIND_EXPIRED: _ClassVar[EventKind]
    EVENT_KIND_REMOVED: _ClassVar[EventKind]
    EVENT_KIND_LEASED: _ClassVar[EventKind]
    EVENT_KIND_RETURNED: _ClassVar[EventKind]
    EVENT_KIND_POOL_REMOVED: _ClassVar[EventKind]
    EVENT_KIND_LOADER_CHANGED: _ClassVar[EventKind]
    EVENT_KIND_HELD_BACK: _ClassVar[EventKind]
    EVENT_KIND_RESTORED: _ClassVar[EventKind]

class PlannedState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLANNED_STATE_UNSPECIFIED: _ClassVar[PlannedState]
    PLANNED_STATE_AD: _ClassVar[PlannedState]
    PLANNED_STATE_COMING: _ClassVar[PlannedState]
    PLANNED_STATE_EMPTY: _ClassVar[PlannedState]

class AdFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AD_FORMAT_UNSPECIFIED: _ClassVar[AdFormat]
    AD_FORMAT_NATIVE: _ClassVar[AdFormat]
    AD_FORMAT_INTERSTITIAL: _ClassVar[AdFormat]
    AD_FORMAT_REWARDED: _ClassVar[AdFormat]
    AD_FORMAT_APP_OPEN: _ClassVar[AdFormat]

class Orientation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ORIENTATION_UNSPECIFIED: _ClassVar[Orientation]
    ORIENTATION_PORTRAIT: _ClassVar[Orientation]
    ORIENTATION_LANDSCAPE: _ClassVar[Orientation]

class AppOpenEvent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    APP_OPEN_EVENT_UNSPECIFIED: _ClassVar[AppOpenEvent]
    APP_OPEN_EVENT_LAUNCH: _ClassVar[AppOpenEvent]
    APP_OPEN_EVENT_FOREGROUND: _ClassVar[AppOpenEvent]

class AppOpenOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    APP_OPEN_OUTCOME_UNSPECIFIED: _ClassVar[AppOpenOutcome]
    APP_OPEN_OUTCOME_SHOW: _ClassVar[AppOpenOutcome]
    APP_OPEN_OUTCOME_SKIP: _ClassVar[AppOpenOutcome]
    APP_OPEN_OUTCOME_NO_AD_READY: _ClassVar[AppOpenOutcome]

class AppOpenReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    APP_OPEN_REASON_UNSPECIFIED: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_FIRST_LAUNCH: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_COLD_START: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_HOT_START: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_FIRST_LAUNCH_EXCLUDED: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_BELOW_THRESHOLD: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_FROM_UNLOCK: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_SESSION_CAP_REACHED: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_DAILY_CAP_REACHED: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_STORE_UNAVAILABLE: _ClassVar[AppOpenReason]
    APP_OPEN_REASON_COLD_START_EXCLUDED: _ClassVar[AppOpenReason]
GDPR_UNSPECIFIED: Gdpr
GDPR_APPLIES: Gdpr
GDPR_DOES_NOT_APPLY: Gdpr
ATT_STATUS_UNSPECIFIED: AttStatus
ATT_STATUS_NOT_DETERMINED: AttStatus
ATT_STATUS_RESTRICTED: AttStatus
ATT_STATUS_DENIED: AttStatus
ATT_STATUS_AUTHORIZED: AttStatus
BORROW_OUTCOME_UNSPECIFIED: BorrowOutcome
BORROW_OUTCOME_LEASED: BorrowOutcome
BORROW_OUTCOME_REUSED: BorrowOutcome
BORROW_OUTCOME_NO_AD_YET: BorrowOutcome
RETURN_OUTCOME_UNSPECIFIED: ReturnOutcome
RETURN_OUTCOME_BACK_IN_POOL: ReturnOutcome
RETURN_OUTCOME_CONSUMED: ReturnOutcome
RETURN_OUTCOME_EXPIRED: ReturnOutcome
RETURN_OUTCOME_REMOVED: ReturnOutcome
RETURN_OUTCOME_INVALIDATED: ReturnOutcome
EVENT_KIND_UNSPECIFIED: EventKind
EVENT_KIND_RECEIVED: EventKind
EVENT_KIND_LOAD_FINISHED: EventKind
EVENT_KIND_EXPIRED: EventKind
EVENT_KIND_REMOVED: EventKind
EVENT_KIND_LEASED: EventKind
EVENT_KIND_RETURNED: EventKind
EVENT_KIND_POOL_REMOVED: EventKind
EVENT_KIND_LOADER_CHANGED: EventKind
EVENT_KIND_HELD_BACK: EventKind
EVENT_KIND_RESTORED: EventKind
PLANNED_STATE_UNSPECIFIED: PlannedState
PLANNED_STATE_AD: PlannedState
PLANNED_STATE_COMING: PlannedState
PLANNED_STATE_EMPTY: PlannedState
AD_FORMAT_UNSPECIFIED: AdFormat
AD_FORMAT_NATIVE: AdFormat
AD_FORMAT_INTERSTITIAL: AdFormat
AD_FORMAT_REWARDED: AdFormat
AD_FORMAT_APP_OPEN: AdFormat
ORIENTATION_UNSPECIFIED: Orientation
ORIENTATION_PORTRAIT: Orientation
ORIENTATION_LANDSCAPE: Orientation
APP_OPEN_EVENT_UNSPECIFIED: AppOpenEvent
APP_OPEN_EVENT_LAUNCH: AppOpenEvent
APP_OPEN_EVENT_FOREGROUND: AppOpenEvent
APP_OPEN_OUTCOME_UNSPECIFIED: AppOpenOutcome
APP_OPEN_OUTCOME_SHOW: AppOpenOutcome
APP_OPEN_OUTCOME_SKIP: AppOpenOutcome
APP_OPEN_OUTCOME_NO_AD_READY: AppOpenOutcome
APP_OPEN_REASON_UNSPECIFIED: AppOpenReason
APP_OPEN_REASON_FIRST_LAUNCH: AppOpenReason
APP_OPEN_REASON_COLD_START: AppOpenReason
APP_OPEN_REASON_HOT_START: AppOpenReason
APP_OPEN_REASON_FIRST_LAUNCH_EXCLUDED: AppOpenReason
APP_OPEN_REASON_BELOW_THRESHOLD: AppOpenReason
APP_OPEN_REASON_FROM_UNLOCK: AppOpenReason
APP_OPEN_REASON_SESSION_CAP_REACHED: AppOpenReason
APP_OPEN_REASON_DAILY_CAP_REACHED: AppOpenReason
APP_OPEN_REASON_STORE_UNAVAILABLE: AppOpenReason
APP_OPEN_REASON_COLD_START_EXCLUDED: AppOpenReason

class Image(_message.Message):
    __slots__ = ("url", "width", "height")
    URL_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    url: str
    width: int
    height: int
    def __init__(self, url: _Optional[str] = ..., width: _Optional[int] = ..., height: _Optional[int] = ...) -> None: ...

class NativeAd(_message.Message):
    __slots__ = ("id", "ad_unit_id", "loader", "format", "headline", "body", "call_to_action", "advertiser", "icon", "image", "star_rating", "price", "store", "click_url", "impression_trackers", "click_trackers", "ad_choices_url", "loaded_at_unix_ms", "expires_at_unix_ms", "show_count", "full_screen")
    ID_FIELD_NUMBER: _ClassVar[int]
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    LOADER_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    HEADLINE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    CALL_TO_ACTION_FIELD_NUMBER: _ClassVar[int]
    ADVERTISER_FIELD_NUMBER: _ClassVar[int]
    ICON_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    STAR_RATING_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    STORE_FIELD_NUMBER: _ClassVar[int]
    CLICK_URL_FIELD_NUMBER: _ClassVar[int]
    IMPRESSION_TRACKERS_FIELD_NUMBER: _ClassVar[int]
    CLICK_TRACKERS_FIELD_NUMBER: _ClassVar[int]
    AD_CHOICES_URL_FIELD_NUMBER: _ClassVar[int]
    LOADED_AT_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    SHOW_COUNT_FIELD_NUMBER: _ClassVar[int]
    FULL_SCREEN_FIELD_NUMBER: _ClassVar[int]
    id: str
    ad_unit_id: str
    loader: str
    format: AdFormat
    headline: str
    body: str
    call_to_action: str
    advertiser: str
    icon: Image
    image: Image
    star_rating: float
    price: str
    store: str
    click_url: str
    impression_trackers: _containers.RepeatedScalarFieldContainer[str]
    click_trackers: _containers.RepeatedScalarFieldContainer[str]
    ad_choices_url: str
    loaded_at_unix_ms: int
    expires_at_unix_ms: int
    show_count: int
    full_screen: FullScreenCreative
    def __init__(self, id: _Optional[str] = ..., ad_unit_id: _Optional[str] = ..., loader: _Optional[str] = ..., format: _Optional[_Union[AdFormat, str]] = ..., headline: _Optional[str] = ..., body: _Optional[str] = ..., call_to_action: _Optional[str] = ..., advertiser: _Optional[str] = ..., icon: _Optional[_Union[Image, _Mapping]] = ..., image: _Optional[_Union[Image, _Mapping]] = ..., star_rating: _Optional[float] = ..., price: _Optional[str] = ..., store: _Optional[str] = ..., click_url: _Optional[str] = ..., impression_trackers: _Optional[_Iterable[str]] = ..., click_trackers: _Optional[_Iterable[str]] = ..., ad_choices_url: _Optional[str] = ..., loaded_at_unix_ms: _Optional[int] = ..., expires_at_unix_ms: _Optional[int] = ..., show_count: _Optional[int] = ..., full_screen: _Optional[_Union[FullScreenCreative, _Mapping]] = ...) -> None: ...

class Lease(_message.Message):
    __slots__ = ("lease_id", "slot_key", "expires_at_unix_ms", "ad")
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    SLOT_KEY_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    AD_FIELD_NUMBER: _ClassVar[int]
    lease_id: int
    slot_key: str
    expires_at_unix_ms: int
    ad: NativeAd
    def __init__(self, lease_id: _Optional[int] = ..., slot_key: _Optional[str] = ..., expires_at_unix_ms: _Optional[int] = ..., ad: _Optional[_Union[NativeAd, _Mapping]] = ...) -> None: ...

class PrivacySignals(_message.Message):
    __slots__ = ("gdpr", "tcf_consent", "gpp", "gpp_sid", "us_privacy", "coppa", "limit_ad_tracking", "att_status")
    GDPR_FIELD_NUMBER: _ClassVar[int]
    TCF_CONSENT_FIELD_NUMBER: _ClassVar[int]
    GPP_FIELD_NUMBER: _ClassVar[int]
    GPP_SID_FIELD_NUMBER: _ClassVar[int]
    US_PRIVACY_FIELD_NUMBER: _ClassVar[int]
    COPPA_FIELD_NUMBER: _ClassVar[int]
    LIMIT_AD_TRACKING_FIELD_NUMBER: _ClassVar[int]
    ATT_STATUS_FIELD_NUMBER: _ClassVar[int]
    gdpr: Gdpr
    tcf_consent: str
    gpp: str
    gpp_sid: _containers.RepeatedScalarFieldContainer[int]
    us_privacy: str
    coppa: bool
    limit_ad_tracking: bool
    att_status: AttStatus
    def __init__(self, gdpr: _Optional[_Union[Gdpr, str]] = ..., tcf_consent: _Optional[str] = ..., gpp: _Optional[str] = ..., gpp_sid: _Optional[_Iterable[int]] = ..., us_privacy: _Optional[str] = ..., coppa: _Optional[bool] = ..., limit_ad_tracking: _Optional[bool] = ..., att_status: _Optional[_Union[AttStatus, str]] = ...) -> None: ...

class PrefetchRequest(_message.Message):
    __slots__ = ("ad_unit_id", "loader", "count", "privacy")
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    LOADER_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    PRIVACY_FIELD_NUMBER: _ClassVar[int]
    ad_unit_id: str
    loader: str
    count: int
    privacy: PrivacySignals
    def __init__(self, ad_unit_id: _Optional[str] = ..., loader: _Optional[str] = ..., count: _Optional[int] = ..., privacy: _Optional[_Union[PrivacySignals, _Mapping]] = ...) -> None: ...

class PrefetchResponse(_message.Message):
    __slots__ = ("available", "in_flight", "requested")
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_FIELD_NUMBER: _ClassVar[int]
    available: int
    in_flight: int
    requested: int
    def __init__(self, available: _Optional[int] = ..., in_flight: _Optional[int] = ..., requested: _Optional[int] = ...) -> None: ...

class BorrowRequest(_message.Message):
    __slots__ = ("ad_unit_id", "loader", "slot_key", "wait_ms", "privacy")
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    LOADER_FIELD_NUMBER: _ClassVar[int]
    SLOT_KEY_FIELD_NUMBER: _ClassVar[int]
    WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    PRIVACY_FIELD_NUMBER: _ClassVar[int]
    ad_unit_id: str
    loader: str
    slot_key: str
    wait_ms: int
    privacy: PrivacySignals
    def __init__(self, ad_unit_id: _Optional[str] = ..., loader: _Optional[str] = ..., slot_key: _Optional[str] = ..., wait_ms: _Optional[int] = ..., privacy: _Optional[_Union[PrivacySignals, _Mapping]] = ...) -> None: ...

class BorrowResponse(_message.Message):
    __slots__ = ("outcome", "lease")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    outcome: BorrowOutcome
    lease: Lease
    def __init__(self, outcome: _Optional[_Union[BorrowOutcome, str]] = ..., lease: _Optional[_Union[Lease, _Mapping]] = ...) -> None: ...

class ReturnRequest(_message.Message):
    __slots__ = ("lease_id", "shown", "invalidate", "invalidate_reason", "device_ip", "device_user_agent")
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    INVALIDATE_FIELD_NUMBER: _ClassVar[int]
    INVALIDATE_REASON_FIELD_NUMBER: _ClassVar[int]
    DEVICE_IP_FIELD_NUMBER: _ClassVar[int]
    DEVICE_USER_AGENT_FIELD_NUMBER: _ClassVar[int]
    lease_id: int
    shown: bool
    invalidate: bool
    invalidate_reason: str
    device_ip: str
    device_user_agent: str
    def __init__(self, lease_id: _Optional[int] = ..., shown: _Optional[bool] = ..., invalidate: _Optional[bool] = ..., invalidate_reason: _Optional[str] = ..., device_ip: _Optional[str] = ..., device_user_agent: _Optional[str] = ...) -> None: ...

class ReturnResponse(_message.Message):
    __slots__ = ("outcome",)
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    outcome: ReturnOutcome
    def __init__(self, outcome: _Optional[_Union[ReturnOutcome, str]] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ("loader", "ad_unit_id")
    LOADER_FIELD_NUMBER: _ClassVar[int]
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    loader: str
    ad_unit_id: str
    def __init__(self, loader: _Optional[str] = ..., ad_unit_id: _Optional[str] = ...) -> None: ...

class PoolStats(_message.Message):
    __slots__ = ("loader", "ad_unit_id", "available", "leased", "in_flight", "parked_borrows", "requests_in_flight", "target", "idle", "loaded", "expired", "consumed", "removed", "upstream_requests", "upstream_failures", "borrow_hits", "borrow_misses", "leases_reclaimed", "held_back_ms", "expired_on_arrival", "memory_refused", "memory_dropped", "in_flight_target", "held_back", "round_trip_ms", "ads_per_request", "minimum_remaining_life_ms", "consent_class", "restored_ads", "restored_leases")
    LOADER_FIELD_NUMBER: _ClassVar[int]
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    LEASED_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    PARKED_BORROWS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    IDLE_FIELD_NUMBER: _ClassVar[int]
    LOADED_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    CONSUMED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    UPSTREAM_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    UPSTREAM_FAILURES_FIELD_NUMBER: _ClassVar[int]
    BORROW_HITS_FIELD_NUMBER: _ClassVar[int]
    BORROW_MISSES_FIELD_NUMBER: _ClassVar[int]
    LEASES_RECLAIMED_FIELD_NUMBER: _ClassVar[int]
    HELD_BACK_MS_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_ON_ARRIVAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_REFUSED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_DROPPED_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_TARGET_FIELD_NUMBER: _ClassVar[int]
    HELD_BACK_FIELD_NUMBER: _ClassVar[int]
    ROUND_TRIP_MS_FIELD_NUMBER: _ClassVar[int]
    ADS_PER_REQUEST_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_REMAINING_LIFE_MS_FIELD_NUMBER: _ClassVar[int]
    CONSENT_CLASS_FIELD_NUMBER: _ClassVar[int]
    RESTORED_ADS_FIELD_NUMBER: _ClassVar[int]
    RESTORED_LEASES_FIELD_NUMBER: _ClassVar[int]
    loader: str
    ad_unit_id: str
    available: int
    leased: int
    in_flight: int
    parked_borrows: int
    requests_in_flight: int
    target: int
    idle: bool
    loaded: int
    expired: int
    consumed: int
    removed: int
    upstream_requests: int
    upstream_failures: int
    borrow_hits: int
    borrow_misses: int
    leases_reclaimed: int
    held_back_ms: int
    expired_on_arrival: int
    memory_refused: int
    memory_dropped: int
    in_flight_target: int
    held_back: str
    round_trip_ms: float
    ads_per_request: float
    minimum_remaining_life_ms: int
    consent_class: str
    restored_ads: int
    restored_leases: int
    def __init__(self, loader: _Optional[str] = ..., ad_unit_id: _Optional[str] = ..., available: _Optional[int] = ..., leased: _Optional[int] = ..., in_flight: _Optional[int] = ..., parked_borrows: _Optional[int] = ..., requests_in_flight: _Optional[int] = ..., target: _Optional[int] = ..., idle: _Optional[bool] = ..., loaded: _Optional[int] = ..., expired: _Optional[int] = ..., consumed: _Optional[int] = ..., removed: _Optional[int] = ..., upstream_requests: _Optional[int] = ..., upstream_failures: _Optional[int] = ..., borrow_hits: _Optional[int] = ..., borrow_misses: _Optional[int] = ..., leases_reclaimed: _Optional[int] = ..., held_back_ms: _Optional[int] = ..., expired_on_arrival: _Optional[int] = ..., memory_refused: _Optional[int] = ..., memory_dropped: _Optional[int] = ..., in_flight_target: _Optional[int] = ..., held_back: _Optional[str] = ..., round_trip_ms: _Optional[float] = ..., ads_per_request: _Optional[float] = ..., minimum_remaining_life_ms: _Optional[int] = ..., consent_class: _Optional[str] = ..., restored_ads: _Optional[int] = ..., restored_leases: _Optional[int] = ...) -> None: ...

class SourceStats(_message.Message):
    __slots__ = ("name", "requests", "no_fills", "bids", "bids_dropped", "failures", "notices_sent", "notices_failed", "notices_dropped", "notices_retried", "notices_restored", "notices_pending", "notices_uncertain")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    NO_FILLS_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    BIDS_DROPPED_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    NOTICES_SENT_FIELD_NUMBER: _ClassVar[int]
    NOTICES_FAILED_FIELD_NUMBER: _ClassVar[int]
    NOTICES_DROPPED_FIELD_NUMBER: _ClassVar[int]
    NOTICES_RETRIED_FIELD_NUMBER: _ClassVar[int]
    NOTICES_RESTORED_FIELD_NUMBER: _ClassVar[int]
    NOTICES_PENDING_FIELD_NUMBER: _ClassVar[int]
    NOTICES_UNCERTAIN_FIELD_NUMBER: _ClassVar[int]
    name: str
    requests: int
    no_fills: int
    bids: int
    bids_dropped: int
    failures: int
    notices_sent: int
    notices_failed: int
    notices_dropped: int
    notices_retried: int
    notices_restored: int
    notices_pending: int
    notices_uncertain: int
    def __init__(self, name: _Optional[str] = ..., requests: _Optional[int] = ..., no_fills: _Optional[int] = ..., bids: _Optional[int] = ..., bids_dropped: _Optional[int] = ..., failures: _Optional[int] = ..., notices_sent: _Optional[int] = ..., notices_failed: _Optional[int] = ..., notices_dropped: _Optional[int] = ..., notices_retried: _Optional[int] = ..., notices_restored: _Optional[int] = ..., notices_pending: _Optional[int] = ..., notices_uncertain: _Optional[int] = ...) -> None: ...

class LoaderStatus(_message.Message):
    __slots__ = ("name", "enabled", "source", "pools", "blocked_creatives")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_CREATIVES_FIELD_NUMBER: _ClassVar[int]
    name: str
    enabled: bool
    source: str
    pools: int
    blocked_creatives: int
    def __init__(self, name: _Optional[str] = ..., enabled: _Optional[bool] = ..., source: _Optional[str] = ..., pools: _Optional[int] = ..., blocked_creatives: _Optional[int] = ...) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ("pools", "sources", "loaders", "instance", "feeds", "pool_store")
    POOLS_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    LOADERS_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    FEEDS_FIELD_NUMBER: _ClassVar[int]
    POOL_STORE_FIELD_NUMBER: _ClassVar[int]
    pools: _containers.RepeatedCompositeFieldContainer[PoolStats]
    sources: _containers.RepeatedCompositeFieldContainer[SourceStats]
    loaders: _containers.RepeatedCompositeFieldContainer[LoaderStatus]
    instance: str
    feeds: FeedStats
    pool_store: PoolStoreStats
    def __init__(self, pools: _Optional[_Iterable[_Union[PoolStats, _Mapping]]] = ..., sources: _Optional[_Iterable[_Union[SourceStats, _Mapping]]] = ..., loaders: _Optional[_Iterable[_Union[LoaderStatus, _Mapping]]] = ..., instance: _Optional[str] = ..., feeds: _Optional[_Union[FeedStats, _Mapping]] = ..., pool_store: _Optional[_Union[PoolStoreStats, _Mapping]] = ...) -> None: ...

class PoolStoreStats(_message.Message):
    __slots__ = ("restored_from", "restored_ads", "restored_leases", "expired_while_down", "reclaimed_leases", "dropped_ads", "uncertain_ads", "down_ms", "restore_ms", "journal_bytes", "journal_commits", "journal_checkpoints", "write_failures")
    RESTORED_FROM_FIELD_NUMBER: _ClassVar[int]
    RESTORED_ADS_FIELD_NUMBER: _ClassVar[int]
    RESTORED_LEASES_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_WHILE_DOWN_FIELD_NUMBER: _ClassVar[int]
    RECLAIMED_LEASES_FIELD_NUMBER: _ClassVar[int]
    DROPPED_ADS_FIELD_NUMBER: _ClassVar[int]
    UNCERTAIN_ADS_FIELD_NUMBER: _ClassVar[int]
    DOWN_MS_FIELD_NUMBER: _ClassVar[int]
    RESTORE_MS_FIELD_NUMBER: _ClassVar[int]
    JOURNAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    JOURNAL_COMMITS_FIELD_NUMBER: _ClassVar[int]
    JOURNAL_CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    WRITE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    restored_from: str
    restored_ads: int
    restored_leases: int
    expired_while_down: int
    reclaimed_leases: int
    dropped_ads: int
    uncertain_ads: int
    down_ms: int
    restore_ms: int
    journal_bytes: int
    journal_commits: int
    journal_checkpoints: int
    write_failures: int
    def __init__(self, restored_from: _Optional[str] = ..., restored_ads: _Optional[int] = ..., restored_leases: _Optional[int] = ..., expired_while_down: _Optional[int] = ..., reclaimed_leases: _Optional[int] = ..., dropped_ads: _Optional[int] = ..., uncertain_ads: _Optional[int] = ..., down_ms: _Optional[int] = ..., restore_ms: _Optional[int] = ..., journal_bytes: _Optional[int] = ..., journal_commits: _Optional[int] = ..., journal_checkpoints: _Optional[int] = ..., write_failures: _Optional[int] = ...) -> None: ...

class FeedStats(_message.Message):
    __slots__ = ("feeds_held", "positions_planned", "positions_filled", "coming_answers", "positions_empty", "separation_holds", "feeds_expired", "feeds_refused", "guarantees_lost")
    FEEDS_HELD_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_PLANNED_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_FILLED_FIELD_NUMBER: _ClassVar[int]
    COMING_ANSWERS_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_EMPTY_FIELD_NUMBER: _ClassVar[int]
    SEPARATION_HOLDS_FIELD_NUMBER: _ClassVar[int]
    FEEDS_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    FEEDS_REFUSED_FIELD_NUMBER: _ClassVar[int]
    GUARANTEES_LOST_FIELD_NUMBER: _ClassVar[int]
    feeds_held: int
    positions_planned: int
    positions_filled: int
    coming_answers: int
    positions_empty: int
    separation_holds: int
    feeds_expired: int
    feeds_refused: int
    guarantees_lost: int
    def __init__(self, feeds_held: _Optional[int] = ..., positions_planned: _Optional[int] = ..., positions_filled: _Optional[int] = ..., coming_answers: _Optional[int] = ..., positions_empty: _Optional[int] = ..., separation_holds: _Optional[int] = ..., feeds_expired: _Optional[int] = ..., feeds_refused: _Optional[int] = ..., guarantees_lost: _Optional[int] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("loader", "ad_unit_id", "kinds")
    LOADER_FIELD_NUMBER: _ClassVar[int]
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    loader: str
    ad_unit_id: str
    kinds: _containers.RepeatedScalarFieldContainer[EventKind]
    def __init__(self, loader: _Optional[str] = ..., ad_unit_id: _Optional[str] = ..., kinds: _Optional[_Iterable[_Union[EventKind, str]]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("kind", "at_unix_ms", "loader", "ad_unit_id", "ad_id", "lease_id", "slot_key", "shown", "count", "error", "reason", "note", "leases", "expired")
    KIND_FIELD_NUMBER: _ClassVar[int]
    AT_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    LOADER_FIELD_NUMBER: _ClassVar[int]
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    AD_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_ID_FIELD_NUMBER: _ClassVar[int]
    SLOT_KEY_FIELD_NUMBER: _ClassVar[int]
    SHOWN_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    kind: EventKind
    at_unix_ms: int
    loader: str
    ad_unit_id: str
    ad_id: str
    lease_id: int
    slot_key: str
    shown: bool
    count: int
    error: str
    reason: str
    note: str
    leases: int
    expired: int
    def __init__(self, kind: _Optional[_Union[EventKind, str]] = ..., at_unix_ms: _Optional[int] = ..., loader: _Optional[str] = ..., ad_unit_id: _Optional[str] = ..., ad_id: _Optional[str] = ..., lease_id: _Optional[int] = ..., slot_key: _Optional[str] = ..., shown: _Optional[bool] = ..., count: _Optional[int] = ..., error: _Optional[str] = ..., reason: _Optional[str] = ..., note: _Optional[str] = ..., leases: _Optional[int] = ..., expired: _Optional[int] = ...) -> None: ...

class SetLoaderEnabledRequest(_message.Message):
    __slots__ = ("loader", "enabled")
    LOADER_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    loader: str
    enabled: bool
    def __init__(self, loader: _Optional[str] = ..., enabled: _Optional[bool] = ...) -> None: ...

class SetLoaderEnabledResponse(_message.Message):
    __slots__ = ("changed",)
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    changed: bool
    def __init__(self, changed: _Optional[bool] = ...) -> None: ...

class ReloadRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReloadResponse(_message.Message):
    __slots__ = ("added", "removed", "changed_keeping_pools", "changed_dropping_pools", "unchanged")
    ADDED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    CHANGED_KEEPING_POOLS_FIELD_NUMBER: _ClassVar[int]
    CHANGED_DROPPING_POOLS_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    added: _containers.RepeatedScalarFieldContainer[str]
    removed: _containers.RepeatedScalarFieldContainer[str]
    changed_keeping_pools: _containers.RepeatedScalarFieldContainer[str]
    changed_dropping_pools: _containers.RepeatedScalarFieldContainer[str]
    unchanged: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, added: _Optional[_Iterable[str]] = ..., removed: _Optional[_Iterable[str]] = ..., changed_keeping_pools: _Optional[_Iterable[str]] = ..., changed_dropping_pools: _Optional[_Iterable[str]] = ..., unchanged: _Optional[_Iterable[str]] = ...) -> None: ...

class ServerInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ServerInfoResponse(_message.Message):
    __slots__ = ("version", "build", "instance", "uptime_ms", "features", "protocol")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    BUILD_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    UPTIME_MS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    version: str
    build: str
    instance: str
    uptime_ms: int
    features: _containers.RepeatedScalarFieldContainer[str]
    protocol: str
    def __init__(self, version: _Optional[str] = ..., build: _Optional[str] = ..., instance: _Optional[str] = ..., uptime_ms: _Optional[int] = ..., features: _Optional[_Iterable[str]] = ..., protocol: _Optional[str] = ...) -> None: ...

class PlanRequest(_message.Message):
    __slots__ = ("feed_id", "ad_unit_id", "loader", "first_visible", "last_visible", "ahead", "placement", "privacy")
    FEED_ID_FIELD_NUMBER: _ClassVar[int]
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    LOADER_FIELD_NUMBER: _ClassVar[int]
    FIRST_VISIBLE_FIELD_NUMBER: _ClassVar[int]
    LAST_VISIBLE_FIELD_NUMBER: _ClassVar[int]
    AHEAD_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    PRIVACY_FIELD_NUMBER: _ClassVar[int]
    feed_id: str
    ad_unit_id: str
    loader: str
    first_visible: int
    last_visible: int
    ahead: int
    placement: PlacementRules
    privacy: PrivacySignals
    def __init__(self, feed_id: _Optional[str] = ..., ad_unit_id: _Optional[str] = ..., loader: _Optional[str] = ..., first_visible: _Optional[int] = ..., last_visible: _Optional[int] = ..., ahead: _Optional[int] = ..., placement: _Optional[_Union[PlacementRules, _Mapping]] = ..., privacy: _Optional[_Union[PrivacySignals, _Mapping]] = ...) -> None: ...

class PlacementRules(_message.Message):
    __slots__ = ("fixed_positions", "repeating_interval", "maximum_ads")
    FIXED_POSITIONS_FIELD_NUMBER: _ClassVar[int]
    REPEATING_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_ADS_FIELD_NUMBER: _ClassVar[int]
    fixed_positions: _containers.RepeatedScalarFieldContainer[int]
    repeating_interval: int
    maximum_ads: int
    def __init__(self, fixed_positions: _Optional[_Iterable[int]] = ..., repeating_interval: _Optional[int] = ..., maximum_ads: _Optional[int] = ...) -> None: ...

class PlannedPosition(_message.Message):
    __slots__ = ("position", "state", "lease")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    position: int
    state: PlannedState
    lease: Lease
    def __init__(self, position: _Optional[int] = ..., state: _Optional[_Union[PlannedState, str]] = ..., lease: _Optional[_Union[Lease, _Mapping]] = ...) -> None: ...

class PlanResponse(_message.Message):
    __slots__ = ("positions", "created")
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    positions: _containers.RepeatedCompositeFieldContainer[PlannedPosition]
    created: bool
    def __init__(self, positions: _Optional[_Iterable[_Union[PlannedPosition, _Mapping]]] = ..., created: _Optional[bool] = ...) -> None: ...

class Reward(_message.Message):
    __slots__ = ("type", "amount")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    type: str
    amount: int
    def __init__(self, type: _Optional[str] = ..., amount: _Optional[int] = ...) -> None: ...

class FullScreenCreative(_message.Message):
    __slots__ = ("markup", "video_url", "vast_xml", "orientation", "width", "height", "reward")
    MARKUP_FIELD_NUMBER: _ClassVar[int]
    VIDEO_URL_FIELD_NUMBER: _ClassVar[int]
    VAST_XML_FIELD_NUMBER: _ClassVar[int]
    ORIENTATION_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    REWARD_FIELD_NUMBER: _ClassVar[int]
    markup: str
    video_url: str
    vast_xml: str
    orientation: Orientation
    width: int
    height: int
    reward: Reward
    def __init__(self, markup: _Optional[str] = ..., video_url: _Optional[str] = ..., vast_xml: _Optional[str] = ..., orientation: _Optional[_Union[Orientation, str]] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., reward: _Optional[_Union[Reward, _Mapping]] = ...) -> None: ...

class AppOpenRequest(_message.Message):
    __slots__ = ("device_id", "session_id", "event", "first_launch", "background_seconds", "from_unlock", "utc_offset_seconds", "ad_unit_id", "loader", "privacy")
    DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    FIRST_LAUNCH_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_SECONDS_FIELD_NUMBER: _ClassVar[int]
    FROM_UNLOCK_FIELD_NUMBER: _ClassVar[int]
    UTC_OFFSET_SECONDS_FIELD_NUMBER: _ClassVar[int]
    AD_UNIT_ID_FIELD_NUMBER: _ClassVar[int]
    LOADER_FIELD_NUMBER: _ClassVar[int]
    PRIVACY_FIELD_NUMBER: _ClassVar[int]
    device_id: str
    session_id: str
    event: AppOpenEvent
    first_launch: bool
    background_seconds: int
    from_unlock: bool
    utc_offset_seconds: int
    ad_unit_id: str
    loader: str
    privacy: PrivacySignals
    def __init__(self, device_id: _Optional[str] = ..., session_id: _Optional[str] = ..., event: _Optional[_Union[AppOpenEvent, str]] = ..., first_launch: _Optional[bool] = ..., background_seconds: _Optional[int] = ..., from_unlock: _Optional[bool] = ..., utc_offset_seconds: _Optional[int] = ..., ad_unit_id: _Optional[str] = ..., loader: _Optional[str] = ..., privacy: _Optional[_Union[PrivacySignals, _Mapping]] = ...) -> None: ...

class AppOpenResponse(_message.Message):
    __slots__ = ("outcome", "reason", "first_launch", "threshold_reached", "session_cap_reached", "daily_cap_reached", "from_unlock", "store_unavailable", "cold_start", "session_count", "daily_count", "day", "lease", "session_reserved", "daily_reserved")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FIRST_LAUNCH_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_REACHED_FIELD_NUMBER: _ClassVar[int]
    SESSION_CAP_REACHED_FIELD_NUMBER: _ClassVar[int]
    DAILY_CAP_REACHED_FIELD_NUMBER: _ClassVar[int]
    FROM_UNLOCK_FIELD_NUMBER: _ClassVar[int]
    STORE_UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    COLD_START_FIELD_NUMBER: _ClassVar[int]
    SESSION_COUNT_FIELD_NUMBER: _ClassVar[int]
    DAILY_COUNT_FIELD_NUMBER: _ClassVar[int]
    DAY_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    SESSION_RESERVED_FIELD_NUMBER: _ClassVar[int]
    DAILY_RESERVED_FIELD_NUMBER: _ClassVar[int]
    outcome: AppOpenOutcome
    reason: AppOpenReason
    first_launch: bool
    threshold_reached: bool
    session_cap_reached: bool
    daily_cap_reached: bool
    from_unlock: bool
    store_unavailable: bool
    cold_start: bool
    session_count: int
    daily_count: int
    day: str
    lease: Lease
    session_reserved: int
    daily_reserved: int
    def __init__(self, outcome: _Optional[_Union[AppOpenOutcome, str]] = ..., reason: _Optional[_Union[AppOpenReason, str]] = ..., first_launch: _Optional[bool] = ..., threshold_reached: _Optional[bool] = ..., session_cap_reached: _Optional[bool] = ..., daily_cap_reached: _Optional[bool] = ..., from_unlock: _Optional[bool] = ..., store_unavailable: _Optional[bool] = ..., cold_start: _Optional[bool] = ..., session_count: _Optional[int] = ..., daily_count: _Optional[int] = ..., day: _Optional[str] = ..., lease: _Optional[_Union[Lease, _Mapping]] = ..., session_reserved: _Optional[int] = ..., daily_reserved: _Optional[int] = ...) -> None: ...
