"""kio's phantom types (i32, uvarint, i32Timedelta, ...) made cheap to construct and check.

kio validates every primitive it writes by "constructing" its phantom type (`uvarint(n)` for each
array length and tag count, `i16(...)`, ...) and every `isinstance(x, i32)`: each goes through
PhantomMeta.__call__ -> parse -> isinstance -> PhantomMeta.__instancecheck__, which asks a
runtime-checkable Protocol's issubclass first. That chain was the largest single cost of encoding
a small response (a Produce answer: ~30 such checks). Here a value whose type is exactly the
phantom's bound is checked with the phantom's own predicate, and anything else (a bool for an
int, a subclass, a wrong type) takes kio's own path: the same answers and the same errors, kio
0.6.5's semantics, without the detour. Imported by codec.py and build.py (kio is used only in
fauxka/broker/protocol/)."""

from kio.static._phantom import PhantomMeta

_kio_call = PhantomMeta.__call__
_kio_instancecheck = PhantomMeta.__instancecheck__


def _call(cls, instance):
    if type(instance) is cls.__bound__ and cls.__predicate__(instance):
        return instance
    return _kio_call(cls, instance)  # raises kio's TypeError, or accepts a subclass as kio does


def _instancecheck(cls, instance) -> bool:
    if type(instance) is cls.__bound__:
        return bool(cls.__predicate__(instance))
    return _kio_instancecheck(cls, instance)


if getattr(PhantomMeta.__call__, "__module__", None) != __name__:  # once, even if reloaded
    PhantomMeta.__call__ = _call
    PhantomMeta.__instancecheck__ = _instancecheck
