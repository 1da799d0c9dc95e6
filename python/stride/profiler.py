"""stride.profiler: where the time goes, as torch.profiler shows it.

    with stride.profiler.profile(record_shapes=True) as prof:
        with stride.profiler.record_function("forward"):
            y = model(x)
        y.sum().backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # Perfetto or chrome://tracing

Every op, backward node, optimizer step and data-loader wait opens a C++
RecordFunction scope (include/stride/profiler.h); record_function opens one
from Python on the calling thread, so it nests with the ops it encloses and
shows up in the table and the trace beside them. Times are CPU wall times in
microseconds. One profiler records at a time; starting a second raises
ValueError.
"""

import enum
import functools

from ._stride import _profiler

__all__ = ["ProfilerActivity", "profile", "record_function"]


class ProfilerActivity(enum.Enum):
    """What a profiler records; stride records the CPU."""

    CPU = "cpu"


class _KeyAverages:
    """The events grouped by name (and input shapes when asked): iterate for
    the rows (key, count, self_cpu_time_total, cpu_time_total in us,
    input_shapes), or print table()."""

    def __init__(self, averages):
        self._averages = averages
        self._rows = averages.rows()

    def table(self, sort_by="self_cpu_time_total", row_limit=100):
        """A table like PyTorch's: name, self %, self total, total %, total,
        calls, average. sort_by: "self_cpu_time_total", "cpu_time_total" or
        "count"; row_limit <= 0 prints every row."""
        return self._averages.table(sort_by, row_limit)

    def __iter__(self):
        return iter(self._rows)

    def __len__(self):
        return len(self._rows)

    def __str__(self):
        return self.table()


class profile:
    """Records every scope of every thread while it runs, as
    torch.profiler.profile: `with profile() as prof:` or start()/stop().
    activities: None or [ProfilerActivity.CPU]; record_shapes: keep the
    inputs' shapes of each op (key_averages(group_by_input_shape=True))."""

    def __init__(self, *, activities=None, record_shapes=False):
        for activity in activities or ():
            if activity is not ProfilerActivity.CPU:
                raise ValueError(f"[profile] stride records the CPU only; got {activity}.")
        self._profiler = _profiler.Profiler(record_shapes)
        self._running = False

    def start(self):
        """Starts recording (ValueError if another profiler records)."""
        self._profiler.start()
        self._running = True

    def stop(self):
        """Stops recording; scopes still open end now."""
        self._profiler.stop()
        self._running = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _check_stopped(self, what):
        if self._running:
            raise RuntimeError(
                f"[profile] {what} needs a stopped profiler; leave the with block "
                "or call stop() first."
            )

    def events(self):
        """The recorded events (name, thread, depth, start_us, end_us,
        cpu_time_total, self_cpu_time_total, input_shapes), by thread then
        start time."""
        self._check_stopped("events()")
        return self._profiler.events()

    def key_averages(self, group_by_input_shape=False):
        """The events grouped by name (and input shapes); .table() prints them."""
        self._check_stopped("key_averages()")
        return _KeyAverages(self._profiler.key_averages(group_by_input_shape))

    def export_chrome_trace(self, path):
        """Writes the events as Trace Event JSON ("X" events, microseconds),
        atomically."""
        self._check_stopped("export_chrome_trace()")
        self._profiler.export_chrome_trace(str(path))


class record_function:
    """A named scope in the profile: `with record_function("load"):` or
    `@record_function("step")`. It costs a flag check when no profiler runs.
    The scope belongs to the thread that opens it and must close on it."""

    def __init__(self, name, args=None):
        self.name = str(name)
        self.args = args
        self._open = []  # whether each nested entry opened a C++ scope

    def __enter__(self):
        opened = _profiler.is_enabled()
        if opened:
            _profiler.begin_scope(self.name)
        self._open.append(opened)
        return self

    def __exit__(self, *exc):
        if self._open.pop():
            _profiler.end_scope()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            # A scope per call: calls may nest or run on several threads.
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper
