"""stride.profiler: ops and record_function scopes in the table and the trace."""

import json
import threading

import pytest
import stride
from stride.profiler import ProfilerActivity, profile, record_function


def rows_by_key(prof, **kwargs):
    return {row.key: row for row in prof.key_averages(**kwargs)}


def test_ops_appear_by_name_with_their_counts():
    x = stride.randn(8, 8)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            (x @ x).relu()
        x + 1
    rows = rows_by_key(prof)
    assert rows["matmul"].count == 3 and rows["relu"].count == 3 and rows["add"].count == 1
    for row in rows.values():
        assert 0 <= row.self_cpu_time_total <= row.cpu_time_total
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    assert "matmul" in table and "# Calls" in table
    assert len(prof.key_averages().table(sort_by="count", row_limit=1).splitlines()) < len(
        table.splitlines()
    )
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="flops")


def test_record_shapes_groups_by_input_shape():
    with profile(record_shapes=True) as prof:
        stride.ones(2, 3) + stride.ones(2, 3)
        stride.ones(4) + stride.ones(4)
    shapes = {
        row.input_shapes for row in prof.key_averages(group_by_input_shape=True) if row.key == "add"
    }
    assert len(shapes) == 2 and rows_by_key(prof)["add"].count == 2


def test_record_function_nests_and_encloses_its_ops():
    x = stride.randn(4, 4)
    with profile() as prof:
        with record_function("outer"):
            x.exp()
            with record_function("inner"):
                x.sin()
    events = {e.name: e for e in prof.events()}
    outer, inner = events["outer"], events["inner"]
    assert (outer.depth, inner.depth, events["exp"].depth, events["sin"].depth) == (0, 1, 1, 2)
    assert outer.start_us <= inner.start_us <= events["sin"].start_us
    assert events["sin"].end_us <= inner.end_us <= outer.end_us
    assert outer.self_cpu_time_total <= outer.cpu_time_total
    assert rows_by_key(prof)["inner"].count == 1


def test_the_chrome_trace_is_json_with_the_record_function_span(tmp_path):
    with profile() as prof:
        with record_function("load_batch"):
            stride.randn(16).sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    span = next(e for e in events if e["name"] == "load_batch")
    assert span["ph"] == "X" and span["dur"] >= 0
    inside = [e for e in events if e["name"] in ("randn", "sum")]
    assert inside and all(
        span["ts"] <= e["ts"] and e["ts"] + e["dur"] <= span["ts"] + span["dur"] + 1e-3
        for e in inside
    )


def test_record_function_is_a_decorator_and_free_without_a_profiler():
    @record_function("step")
    def step(depth):
        return step(depth - 1) if depth else stride.ones(2).sum()

    step(2)  # no profiler: records nothing, and leaves nothing open
    with profile() as prof:
        step(2)
    rows = rows_by_key(prof)
    assert rows["step"].count == 3
    assert [e.depth for e in prof.events() if e.name == "step"] == [0, 1, 2]


def test_profiling_twice_keeps_each_sessions_events_apart():
    with profile() as first:
        stride.ones(3).exp()
    with profile() as second:
        stride.ones(3).sin()
        stride.ones(3).sin()
    assert "exp" in rows_by_key(first) and "sin" not in rows_by_key(first)
    assert rows_by_key(second)["sin"].count == 2 and "exp" not in rows_by_key(second)


def test_one_profiler_records_at_a_time_and_results_need_it_stopped():
    with profile() as outer:
        with pytest.raises(ValueError, match="already recording"):
            with profile():
                pass
        with pytest.raises(RuntimeError, match="stopped profiler"):
            outer.events()
    with pytest.raises(ValueError, match="CPU only"):
        profile(activities=["cuda"])


def test_scopes_of_other_threads_are_recorded_on_their_own_thread():
    def work():
        with record_function("worker_scope"):
            stride.ones(4).exp()

    with profile() as prof:
        with record_function("main_scope"):
            thread = threading.Thread(target=work)
            thread.start()
            thread.join()
    events = {e.name: e for e in prof.events() if e.name.endswith("_scope")}
    assert events["worker_scope"].thread != events["main_scope"].thread
    assert events["worker_scope"].depth == 0
