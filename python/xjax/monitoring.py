"""Instrumentation hooks (jax.monitoring): code reports named events, durations and scalars, and every
listener registered for that kind of record is called with it."""

_listeners = {"event": [], "duration": [], "time_span": [], "scalar": []}


def _record(kind, *args, **kwargs):
    for listener in list(_listeners[kind]):
        listener(*args, **kwargs)


def record_event(event, **kwargs):
    """Calls every event listener with (event, **kwargs)."""
    _record("event", event, **kwargs)


def record_event_duration_secs(event, duration, **kwargs):
    """Calls every duration listener with (event, duration in seconds, **kwargs)."""
    _record("duration", event, duration, **kwargs)


def record_event_time_span(event, start_time, end_time, **kwargs):
    """Calls every time-span listener with (event, start and end time in seconds, **kwargs)."""
    _record("time_span", event, start_time, end_time, **kwargs)


def record_scalar(event, value, **kwargs):
    """Calls every scalar listener with (event, value, **kwargs)."""
    _record("scalar", event, value, **kwargs)


def register_event_listener(callback):
    _listeners["event"].append(callback)


def register_event_duration_secs_listener(callback):
    _listeners["duration"].append(callback)


def register_event_time_span_listener(callback):
    _listeners["time_span"].append(callback)


def register_scalar_listener(callback):
    _listeners["scalar"].append(callback)


def _unregister(kind, callback):
    if callback not in _listeners[kind]:
        raise AssertionError(f"jax.monitoring: {callback} is not a registered {kind} listener")
    _listeners[kind].remove(callback)


def unregister_event_listener(callback):
    _unregister("event", callback)


def unregister_event_duration_listener(callback):
    _unregister("duration", callback)


def unregister_event_time_span_listener(callback):
    _unregister("time_span", callback)


def unregister_scalar_listener(callback):
    _unregister("scalar", callback)


def clear_event_listeners():
    """Removes every listener of every kind."""
    for listeners in _listeners.values():
        listeners.clear()
