from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MetadataEntry(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class RequestFrame(_message.Message):
    __slots__ = ("call_id", "method", "timeout_ms", "metadata", "message", "cancel")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    method: str
    timeout_ms: int
    metadata: _containers.RepeatedCompositeFieldContainer[MetadataEntry]
    message: bytes
    cancel: bool
    def __init__(self, call_id: _Optional[int] = ..., method: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., metadata: _Optional[_Iterable[_Union[MetadataEntry, _Mapping]]] = ..., message: _Optional[bytes] = ..., cancel: _Optional[bool] = ...) -> None: ...

class ResponseFrame(_message.Message):
    __slots__ = ("call_id", "message", "end", "status", "status_message")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    message: bytes
    end: bool
    status: int
    status_message: str
    def __init__(self, call_id: _Optional[int] = ..., message: _Optional[bytes] = ..., end: _Optional[bool] = ..., status: _Optional[int] = ..., status_message: _Optional[str] = ...) -> None: ...
